// `npm run screenshots`: starts the app in this process on a fresh SQLite
// database, seeds a small realistic team (an admin with two-factor on, an
// agent, contacts and inquiries in varied states), and saves a full-page PNG
// of every page at desktop (1280×800) and phone (390×844) width into
// screenshots/ (git-ignored), e.g. screenshots/contacts-index-desktop.png.
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { here, launchBrowser, newUser, signIn, startEmptyApp, submit, totp, watch } from '../test/browser/helpers.ts';

const OUT = path.resolve(import.meta.dirname, '../screenshots');
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

const admin = { name: 'Maria Keller', email: 'maria@example.com', password: 'a long admin passphrase' };
const agent = { name: 'Tomás Silva', email: 'tomas@example.com', password: 'a long agent passphrase' };

const CONTACTS = [
  {
    name: 'Aiko Tanaka',
    email: 'aiko@kumo.example',
    phone: '+81 3 5555 0101',
    occupation: 'Operations lead',
    country: 'Japan',
    city: 'Osaka',
    service_id: 3,
    source_id: 1,
    budget: '¥2,000,000',
    detail: 'Wants a quote for 40 seats; prefers a call in the morning (JST).',
  },
  {
    name: 'Lars Eriksen',
    email: 'lars@fjord.example',
    phone: '+47 22 55 01 02',
    occupation: 'CTO',
    country: 'Norway',
    city: 'Bergen',
    service_id: 1,
    source_id: 2,
    budget: '€15,000',
  },
  {
    name: 'Fatima Zahra',
    email: 'fatima@atlas.example',
    phone: '+212 522 555 010',
    occupation: 'Buyer',
    country: 'Morocco',
    city: 'Casablanca',
    service_id: 2,
    source_id: 3,
  },
  {
    name: 'Jonas Becker',
    email: 'jonas@werk.example',
    occupation: 'Facility manager',
    country: 'Germany',
    city: 'Leipzig',
    service_id: 3,
    detail: 'Met at the trade fair; interested in the maintenance plan.',
  },
  {
    name: 'Priya Raman',
    email: 'priya@lotus.example',
    phone: '+91 80 5555 0105',
    occupation: 'Founder',
    country: 'India',
    city: 'Bengaluru',
    service_id: 1,
    source_id: 1,
    budget: '₹8,00,000',
  },
  { name: 'Diego Fernández', email: 'diego@sol.example', country: 'Spain', city: 'Valencia', service_id: 2 },
];

interface Shot {
  name: string;
  /** Brings the page to the state to capture (a GET, or a form sent). */
  go: (page: Page) => Promise<void>;
  /** A plain GET: loaded afresh at phone width rather than resized. */
  reload?: boolean;
}

async function main() {
  fs.mkdirSync(OUT, { recursive: true });
  const app = await startEmptyApp('sqlite');
  const browser = await launchBrowser();
  const problems: string[] = [];
  try {
    const { context, page } = await newUser(browser, app.url, { viewport: DESKTOP });
    const shots: Shot[] = [];
    const shoot = async (shot: Shot, p: Page = page) => {
      await p.setViewportSize(DESKTOP);
      await shot.go(p);
      await p.evaluate(() => document.fonts.ready);
      await p.screenshot({ path: path.join(OUT, `${shot.name}-desktop.png`), fullPage: true });
      // The same document at phone width (a one-time page, e.g. recovery codes, cannot be fetched twice).
      await p.setViewportSize(PHONE);
      if (shot.reload) await p.reload();
      // Let the new layout paint before capturing (a resized table box may otherwise come out blank or half drawn).
      await p.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
      await p.waitForTimeout(100);
      await p.screenshot({ path: path.join(OUT, `${shot.name}-phone.png`), fullPage: true });
      // At 390 px nothing may push the page sideways (wide tables scroll inside their own box).
      const width = await p.evaluate(() => document.documentElement.scrollWidth);
      if (width > PHONE.width)
        problems.push(`${shot.name}: the page is ${width} px wide at phone width (${PHONE.width} px)`);
      const trouble = watch(p);
      problems.push(...trouble.dialogs.splice(0), ...trouble.errors.splice(0));
      shots.push(shot);
    };
    const goto = (to: string) => async (p: Page) => {
      await p.goto(to);
    };

    // First run.
    await shoot({ name: 'setup', go: goto('/'), reload: true });
    await shoot({
      name: 'setup-errors',
      go: async (p) => {
        await p.goto('/setup');
        await p.getByLabel('Name (required)').fill(admin.name);
        await p.getByLabel('Email (required)').fill('maria@');
        await p.getByLabel('Password (required)').fill('short');
        await submit(p, 'Create the admin account');
      },
    });
    await page.getByLabel('Email (required)').fill(admin.email);
    await page.getByLabel('Password (required)').fill(admin.password);
    await submit(page, 'Create the admin account');
    await shoot({ name: 'dashboard-empty', go: goto('/'), reload: true });

    // Seed through the API with a token.
    const issued = await fetch(`${app.url}/api/v1/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: admin.email, password: admin.password, device_name: 'screenshots' }),
    });
    const token = ((await issued.json()) as { token: string }).token;
    const api = async (method: string, to: string, body?: unknown) => {
      const r = await fetch(app.url + to, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (r.status >= 300) throw new Error(`${method} ${to}: ${r.status} ${await r.text()}`);
      if (r.status === 204) return { data: {} };
      return (await r.json()) as { data: Record<string, unknown> };
    };
    const agentId = (
      await api('POST', '/api/v1/users', { ...agent, role: 'agent', city: 'Lisbon', country: 'Portugal' })
    ).data.id as number;
    // The lookups the contacts name (ids 1–3 on a fresh database), by name in the lists.
    for (const name of ['Maintenance plan', 'Installation', 'Training'])
      await api('POST', '/api/v1/services', { name });
    for (const name of ['Website', 'Trade fair', 'Referral']) await api('POST', '/api/v1/sources', { name });
    const contactIds: number[] = [];
    for (const c of CONTACTS) contactIds.push((await api('POST', '/api/v1/contacts', c)).data.id as number);
    const states = [
      {
        inquiry_status: true,
        status: true,
        inquiry_type: false,
        assigned_to: agentId,
        ticket_id: '9007199254740993',
        ticket_date: '2026-11-20',
      },
      { inquiry_status: false, status: null, inquiry_type: true, assigned_to: agentId },
      { inquiry_status: null, status: false, inquiry_type: null },
      { inquiry_status: true, status: null, inquiry_type: true, assigned_to: null, inquiry_country: 'Norway' },
      { inquiry_status: null, status: null, inquiry_type: null },
    ];
    const inquiryIds: number[] = [];
    for (const [i, s] of states.entries()) {
      inquiryIds.push((await api('POST', '/api/v1/inquiries', { ...CONTACTS[i], ...s })).data.id as number);
    }

    // A contact with inquiries, notes (one mentions the agent) and a change to undo; a deleted contact in the trash.
    for (const i of [0, 1]) await api('PATCH', `/api/v1/inquiries/${inquiryIds[i]}`, { contact_id: contactIds[0] });
    await api('POST', `/api/v1/contacts/${contactIds[0]}/notes`, {
      body: 'Called on Monday: wants a quote for the spring season. @tomas@example.com can you follow up?',
    });
    await api('PATCH', `/api/v1/contacts/${contactIds[0]}`, { city: 'Kyoto', occupation: 'Buyer' });
    await api('POST', `/api/v1/contacts/${contactIds[3]}/notes`, { body: 'Asked us to call back in January.' });
    await api('DELETE', `/api/v1/contacts/${contactIds[3]}`);

    // Work the agent gives the admin: an inquiry, a mention in a note, and a task of the admin's own that is due.
    const agentToken = (
      (await (
        await fetch(`${app.url}/api/v1/auth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: agent.email, password: agent.password, device_name: 'screenshots' }),
        })
      ).json()) as { token: string }
    ).token;
    const asAgent = async (method: string, to: string, body: unknown) => {
      const r = await fetch(app.url + to, {
        method,
        headers: { authorization: `Bearer ${agentToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (r.status >= 300) throw new Error(`${method} ${to}: ${r.status} ${await r.text()}`);
    };
    await asAgent('PATCH', `/api/v1/inquiries/${inquiryIds[1]}`, { assigned_to: 1 });
    await asAgent('POST', `/api/v1/inquiries/${inquiryIds[0]}/notes`, { body: `@${admin.email} the quote is ready.` });
    await api('POST', '/api/v1/tasks', {
      title: 'Call back about the quote',
      inquiry_id: inquiryIds[0],
      due_at: '2026-01-05',
    });
    await api('POST', '/api/v1/tasks', { title: 'Send the brochure', contact_id: contactIds[0], due_at: '2099-01-05' });
    // Who gets new inquiries: a rule for Portugal (in turn, answered within an hour), and one inquiry already late.
    await api('POST', '/api/v1/assignment-rules', {
      name: 'Portugal and Spain',
      position: 1,
      match: { country: 'Portugal' },
      strategy: 'round_robin',
      users: [agentId, 1],
      capacity: 20,
      respond_within_minutes: 60,
    });
    await api('POST', '/api/v1/assignment-rules', {
      name: 'Everyone else',
      position: 2,
      strategy: 'least_open',
      users: [agentId],
    });
    await api('PATCH', `/api/v1/inquiries/${inquiryIds[2]}`, { due_at: '2026-01-10T09:00:00Z', assigned_to: agentId });
    await api('POST', '/api/v1/intake-forms', {
      name: 'Website contact form',
      slug: 'contact',
      fields: ['name', 'email', 'phone', 'country', 'detail'],
      required: ['name', 'email'],
      source_id: 1,
      allowed_origins: ['https://www.example.com'],
    });
    // The scheduler (every 5 s) finds the task that is due.
    await new Promise((r) => setTimeout(r, 5500));

    await shoot({ name: 'dashboard', go: goto('/'), reload: true });
    await shoot({ name: 'notifications', go: goto('/notifications'), reload: true });
    await shoot({ name: 'contacts-index', go: goto('/contacts'), reload: true });
    await shoot({ name: 'contacts-index-empty', go: goto('/contacts?search=nobody-by-this-name'), reload: true });
    // The list's tools: the column chooser open; a saved view, shared with the team, opened with its own columns.
    await shoot({
      name: 'contacts-index-columns',
      go: async (p) => {
        await p.goto('/contacts');
        await p.locator('summary', { hasText: 'Columns' }).click();
      },
    });
    const view = { query: 'sort=name&filter%5Bcountry%5D%5Bcontains%5D=a', columns: 'name,city,country,source_id' };
    await api('POST', '/api/v1/views', { name: 'Countries with an A', resource: 'contacts', shared: true, ...view });
    await shoot({
      name: 'contacts-index-view',
      go: goto(`/contacts?${view.query}&columns=${encodeURIComponent(view.columns)}`),
      reload: true,
    });
    await shoot({ name: 'contacts-detail', go: goto(`/contacts/${contactIds[0]}`), reload: true });
    await shoot({ name: 'contacts-new', go: goto('/contacts/new'), reload: true });
    await shoot({
      name: 'contacts-new-errors',
      go: async (p) => {
        await p.goto('/contacts/new');
        await p.getByLabel('Name').fill('Ingrid Holm');
        await p.getByLabel('Email').fill('ingrid@example.com');
        await p.getByLabel('Phone').fill('not a phone number');
        await p.getByLabel('Detail').fill('x'.repeat(501));
        await submit(p, 'Create contact');
      },
    });
    await shoot({ name: 'contacts-edit', go: goto(`/contacts/${contactIds[1]}/edit`), reload: true });
    await shoot({ name: 'contacts-delete', go: goto(`/contacts/${contactIds[5]}/delete`), reload: true });
    await shoot({
      name: 'contacts-conflict',
      go: async (p) => {
        const other = await context.newPage();
        await p.goto(`/contacts/${contactIds[2]}/edit`);
        await other.goto(`/contacts/${contactIds[2]}/edit`);
        await other.getByLabel('City').fill(`Rabat ${Date.now() % 1000}`);
        await submit(other, 'Save changes');
        await other.close();
        // The same field in both tabs: a conflict (a different one would just be saved).
        await p.getByLabel('City').fill('Fès');
        await p.getByLabel('Phone').fill('+212 522 555 999');
        await submit(p, 'Save changes');
      },
    });
    await shoot({ name: 'contacts-import', go: goto('/contacts/import'), reload: true });
    await shoot({
      name: 'contacts-import-report',
      go: async (p) => {
        await p.goto('/contacts/import');
        const csv =
          'name,email,city,service_id\r\nNoah Weber,noah@example.com,Zurich,2\r\nEmma Rossi,emma@example.com,Milan,two\r\nLiam Byrne,liam@example.com,Cork,1\r\n';
        await p
          .getByLabel('CSV file')
          .setInputFiles({ name: 'contacts.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
        await p.locator('main').getByRole('button', { name: 'Import' }).click();
        await p.getByRole('heading', { name: 'Import of contacts' }).waitFor();
      },
    });
    await shoot({ name: 'inquiries-index', go: goto('/inquiries'), reload: true });
    await shoot({
      name: 'inquiries-index-filtered',
      go: goto(`/inquiries?filter[assigned_to]=${agentId}&filter[inquiry_status]=true`),
      reload: true,
    });
    await shoot({ name: 'inquiries-detail', go: goto(`/inquiries/${inquiryIds[0]}`), reload: true });
    await shoot({ name: 'inquiries-board', go: goto('/inquiries/board'), reload: true });
    await shoot({ name: 'inquiries-detail', go: goto(`/inquiries/${inquiryIds[0]}`), reload: true });
    await shoot({ name: 'inquiries-new-from-contact', go: goto(`/inquiries/new?from=${contactIds[4]}`), reload: true });
    await shoot({ name: 'assignment-rules', go: goto('/assignment-rules?sort=position'), reload: true });
    await shoot({ name: 'assignment-rules-new', go: goto('/assignment-rules/new'), reload: true });
    await shoot({ name: 'intake-hosted', go: goto('/f/contact'), reload: true });
    await shoot({
      name: 'settings-intake',
      go: async (p) => {
        await p.goto('/settings#intake');
        await p.locator('#intake summary').first().click();
      },
    });
    await shoot({ name: 'settings-dry-run', go: goto('/settings?try=1&country=portugal#assignment'), reload: true });
    await shoot({ name: 'users-index', go: goto('/users'), reload: true });
    await shoot({ name: 'users-new', go: goto('/users/new'), reload: true });
    // A user's page: the has-many panels of the records that reference the user (inquiries assigned, contacts created).
    await shoot({ name: 'users-detail', go: goto(`/users/${agentId}`), reload: true });
    await shoot({ name: 'activity', go: goto('/activity'), reload: true });
    await shoot({ name: 'trash', go: goto('/trash'), reload: true });
    await shoot({ name: 'users-delete-reassign', go: goto(`/users/${agentId}/delete`), reload: true });
    await shoot({
      name: 'contacts-note-added',
      go: async (p) => {
        await p.goto(`${app.url}/contacts/${contactIds[0]}`);
        await p.getByLabel('Add a note').fill('Sent the quote by email. @Maria please check the prices.');
        await p.getByRole('button', { name: 'Add note' }).click();
        await p.getByText('Your note was added.').waitFor();
      },
    });
    await shoot({ name: 'inquiries-edit', go: goto(`/inquiries/${inquiryIds[0]}/edit`), reload: true });
    await shoot({ name: 'not-found', go: goto('/contacts/999999'), reload: true });
    await shoot({ name: 'verify-email', go: goto('/verify-email'), reload: true });

    // Profile, then two-factor set up on it.
    await api('PATCH', '/api/v1/me', {
      bio: 'Runs the sales desk.',
      city: 'Zurich',
      country: 'Switzerland',
      phone: '+41 44 555 01 00',
    });
    await shoot({ name: 'profile', go: goto('/profile'), reload: true });
    await shoot({
      name: 'profile-errors',
      go: async (p) => {
        await p.goto('/profile');
        await p.locator('#password-current-password').fill('wrong password');
        await p.locator('#password-password').fill('short');
        await submit(p, 'Change password');
      },
    });
    let secret = '';
    await shoot({
      name: 'two-factor-setup',
      go: async (p) => {
        await p.goto('/profile');
        const password = p.locator('#enable-password');
        if (await password.count()) await password.fill(admin.password);
        await submit(p, 'Enable two-factor authentication');
        secret = (await p.locator('#two-factor-secret').innerText()).replace(/\s+/g, '');
      },
    });
    await shoot({
      name: 'recovery-codes',
      go: async (p) => {
        await p.getByLabel('6-digit code from the app').fill(totp(secret));
        await submit(p, 'Turn on');
      },
    });
    await shoot({ name: 'profile-two-factor-on', go: goto('/profile#two-factor'), reload: true });

    // Signed out: sign-in, its error, the two-factor challenge, forgotten password.
    const { context: stranger, page: out } = await newUser(browser, app.url, { viewport: DESKTOP });
    await shoot({ name: 'login', go: goto('/login'), reload: true }, out);
    await shoot(
      {
        name: 'login-error',
        go: async (p) => {
          await p.goto('/login');
          await p.getByLabel('Email').fill(admin.email);
          await p.getByLabel('Password').fill('not it');
          await submit(p, 'Sign in');
        },
      },
      out,
    );
    await shoot({ name: 'two-factor-challenge', go: async (p) => signIn(p, admin.email, admin.password) }, out);
    await shoot(
      {
        name: 'two-factor-challenge-error',
        go: async (p) => {
          await p.getByLabel('Authentication code').fill('000000');
          await submit(p, 'Continue');
        },
      },
      out,
    );
    await stranger.clearCookies();
    await shoot({ name: 'forgot-password', go: goto('/forgot-password'), reload: true }, out);
    await shoot(
      {
        name: 'reset-password',
        go: goto('/reset-password?token=expired-example&email=maria%40example.com'),
        reload: true,
      },
      out,
    );
    await shoot(
      { name: 'invitation', go: goto('/invitation?token=example&email=tomas%40example.com'), reload: true },
      out,
    );
    await shoot(
      {
        name: 'reset-password-error',
        go: async (p) => {
          await p.goto('/reset-password?token=expired-example&email=maria%40example.com');
          await p.getByLabel('New password').fill('a long enough password');
          await submit(p, 'Set the new password');
        },
      },
      out,
    );

    // The agent's view.
    const { page: agentPage } = await newUser(browser, app.url, { viewport: DESKTOP });
    await signIn(agentPage, agent.email, agent.password);
    if (here(agentPage) !== '/') throw new Error(`the agent did not land on the dashboard: ${agentPage.url()}`);
    await shoot({ name: 'dashboard-agent', go: goto('/'), reload: true }, agentPage);
    await shoot({ name: 'inquiries-board-mine', go: goto('/inquiries/board?mine=1&open=1'), reload: true }, agentPage);

    console.log(
      `${shots.length * 2} screenshots of ${shots.length} pages in ${path.relative(process.cwd(), OUT) || OUT}/`,
    );
    if (problems.length) {
      console.error(`Problems seen on the pages:\n${problems.map((p) => `  ${p}`).join('\n')}`);
      process.exitCode = 1;
    }
  } finally {
    await browser.close();
    await app.close();
  }
}

await main();
