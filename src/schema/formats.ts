// Formats of text fields. Each owns everything about itself: its JSON schema
// format, its check, the rule the seed would write, the HTML input, the link a
// value becomes when shown, and sample values for the generated boundary
// tests. Adding a format touches only this file.
import { fail, ok, type Parsed } from './values.ts';

export type FormatName = 'email' | 'uri' | 'phone' | 'slug' | 'origin';

export interface Format {
  /** The JSON schema `format` (OpenAPI), when JSON schema has one. */
  schemaFormat?: string;
  /** The seed's (Laravel's) rule for it. */
  rule?: string;
  input: 'email' | 'url' | 'tel' | 'text';
  /** Checks a value that is already valid text. */
  parse(text: string): Parsed<string>;
  /** Where the value links to when shown; none for a value that is not safe to link. */
  href(value: string): string | undefined;
  samples: { valid: readonly string[]; invalid: readonly string[] };
  /** A valid value that carries `tag` (letters and digits), for tests and fake data that must recognise it. */
  tagged(tag: string): string;
}

// The WHATWG definition of a valid e-mail address (what <input type=email> accepts).
const EMAIL_LABEL = '[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?';
const EMAIL = new RegExp(`^[a-zA-Z0-9.!#$%&'*+/=?^_\`{|}~-]+@${EMAIL_LABEL}(?:\\.${EMAIL_LABEL})*$`);

/** Web addresses only: a link shown to a colleague must never run script (javascript:) or open a file. */
function webUrl(text: string): URL | undefined {
  if (!URL.canParse(text)) return undefined;
  const url = new URL(text);
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname ? url : undefined;
}

const email: Format = {
  schemaFormat: 'email',
  rule: 'email',
  input: 'email',
  parse: (text) => (EMAIL.test(text) ? ok(text) : fail('must be a valid email address')),
  href: (value) => (EMAIL.test(value) ? `mailto:${value}` : undefined),
  samples: {
    valid: ['ada@example.org', 'o.brien+leads@mail.example.com'],
    invalid: ['not an email', 'ada@', '@example.org'],
  },
  tagged: (tag) => `${tag}@example.org`,
};

const uri: Format = {
  schemaFormat: 'uri',
  rule: 'url',
  input: 'url',
  parse: (text) => (webUrl(text) ? ok(text) : fail('must be a valid URL starting with http:// or https://')),
  href: (value) => webUrl(value)?.href,
  samples: {
    valid: ['https://example.org', 'http://solar.example/path?q=1'],
    invalid: ['not a url', 'javascript:alert(1)', 'example.org'],
  },
  tagged: (tag) => `https://example.org/${tag}`,
};

// Any text a person writes for a phone number is kept as written; shown, it dials.
const phone: Format = {
  input: 'tel',
  parse: ok,
  href: (value) => {
    const digits = value.replace(/[^\d+]/g, '');
    return digits.replace('+', '').length >= 3 ? `tel:${digits}` : undefined;
  },
  samples: { valid: ['+44 20 7946 0958', '(555) 010-0199'], invalid: [] },
  tagged: (tag) => `+1 555 0100 ${tag}`,
};

// A name in an address (/f/<slug>): lower-case letters and digits, words joined by single dashes.
const SLUG = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const slug: Format = {
  input: 'text',
  parse: (text) =>
    SLUG.test(text) ? ok(text) : fail('must be lower-case letters and digits, words joined by dashes: contact-us'),
  href: () => undefined,
  samples: { valid: ['contact-us', 'spring-2027'], invalid: ['Contact Us', 'a--b', '-a', 'ä'] },
  tagged: (tag) =>
    `form-${tag
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')}`,
};

// A web origin: the scheme, the host and the port a browser sends in its Origin header; no path.
const origin: Format = {
  input: 'url',
  parse(text) {
    const url = webUrl(text);
    return url && url.origin === text.replace(/\/$/, '')
      ? ok(url.origin)
      : fail('must be an origin such as https://www.example.com (no path)');
  },
  href: (value) => webUrl(value)?.href,
  samples: {
    valid: ['https://www.example.com', 'http://localhost:8080'],
    invalid: ['www.example.com', 'https://example.com/form', 'ftp://example.com'],
  },
  tagged: (tag) =>
    `https://${
      tag
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '-')
        .replace(/^-|-$/g, '') || 'x'
    }.example.org`,
};

export const formats: Record<FormatName, Format> = { email, uri, phone, slug, origin };
