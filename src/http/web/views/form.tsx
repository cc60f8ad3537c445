// Inputs derived from a field declaration: its input kind picks the control,
// a nullable boolean gets three choices so "not set" stays possible, and a
// reference becomes a list of the records it may name, by title.
import { type Choice, type Choices, PICKER_LIMIT } from '../../../records/references.ts';
import type { FieldErrors } from '../../../errors.ts';
import type { InputKind } from '../../../schema/kinds.ts';
import { type Field, optionsOf, unsetWordOf } from '../../../schema/resource.ts';
import type { JSX } from 'preact';

export function CsrfInput({ token }: { token: string }) {
  return <input type="hidden" name="_csrf" value={token} />;
}

export function FieldError({ id, messages }: { id: string; messages?: string[] }) {
  if (!messages?.length) return null;
  return (
    <p class="field-error" id={id}>
      {messages.join('; ')}
    </p>
  );
}

/** The value as the form shows it: the typed text after a failed save, else the stored value. */
export function shownValue(field: Field, value: unknown): string {
  return field.kind.toInput(value);
}

/** The `type` of the <input> for each input kind; a new input kind does not compile until it has one. */
const INPUT_TYPES: Record<InputKind, string> = {
  text: 'text',
  email: 'email',
  url: 'url',
  tel: 'tel',
  number: 'number',
  date: 'date',
  password: 'password',
  // Drawn as controls of their own (three choices, a text area); an input of this type is never made.
  checkbox: 'checkbox',
  textarea: 'text',
};
// `tel` brings up the phone keypad; its autocomplete token lets the browser offer saved numbers, as email does.
const AUTOCOMPLETE: Partial<Record<InputKind, string>> = {
  password: 'new-password',
  email: 'email',
  tel: 'tel',
  url: 'url',
};

/** The options of a reference's select: "nobody", then each record by title. */
export function ChoiceOptions({ choices, selected }: { choices: readonly Choice[]; selected: string }) {
  return (
    <>
      <option value="">— none —</option>
      {choices.map((c) => (
        <option value={c.id} selected={selected === c.id}>
          {c.title}
        </option>
      ))}
    </>
  );
}

/**
 * `required` overrides the declaration where a form needs more (registering takes a password; an admin's create may
 * leave it out).
 */
export function FieldInput(props: {
  field: Field;
  value: unknown;
  errors?: string[];
  choices: Choices;
  autoFocus?: boolean;
  optionalPassword?: boolean;
  required?: boolean;
}) {
  const { field, value, errors, choices } = props;
  const required = props.required ?? (field.required && !props.optionalPassword);
  const hint = props.optionalPassword
    ? 'Leave empty to keep the current password.'
    : props.required === undefined
      ? field.hint
      : undefined;
  const id = `field-${field.name}`;
  const errorId = `${id}-error`;
  const invalid = errors?.length ? 'true' : undefined;
  const described = [hint ? `${id}-hint` : '', errors?.length ? errorId : ''].filter(Boolean).join(' ') || undefined;
  const text = shownValue(field, value);

  if (field.kind.options) {
    return (
      <fieldset class="field" aria-invalid={invalid} aria-describedby={described}>
        <legend>{field.label}</legend>
        <div class="tri">
          {[...optionsOf(field), ...(field.nullable ? [{ value: '', label: unsetWordOf(field) }] : [])].map(
            ({ value: v, label }) => (
              <label>
                <input type="radio" name={field.name} value={v} checked={text === v} /> {label}
              </label>
            ),
          )}
        </div>
        <FieldError id={errorId} messages={errors} />
      </fieldset>
    );
  }

  if (field.listTarget) {
    // Ticked from the records there are; the empty value makes "none ticked" a value too.
    const ticked = new Set(text.split('\n'));
    return (
      <fieldset class="field" aria-invalid={invalid} aria-describedby={described}>
        <legend>{field.label}</legend>
        <input type="hidden" name={field.name} value="" />
        <div class="ticks">
          {(choices.get(field.listTarget.name) ?? []).map((c) => (
            <label>
              <input type="checkbox" name={field.name} value={c.id} checked={ticked.has(c.id)} /> {c.title}
            </label>
          ))}
        </div>
        {hint ? (
          <p class="field-hint" id={`${id}-hint`}>
            {hint}
          </p>
        ) : null}
        <FieldError id={errorId} messages={errors} />
      </fieldset>
    );
  }

  let control: JSX.Element;
  if (field.target) {
    const options = choices.get(field.target.name) ?? [];
    control = (
      <>
        {options.length >= PICKER_LIMIT && (
          <input
            type="search"
            class="picker-search"
            aria-label={`Search ${field.target.name}`}
            placeholder={`Search ${field.target.name}…`}
            name="q"
            form=""
            hx-get={`/${field.target.name}/choices`}
            hx-trigger="input changed delay:250ms, search"
            hx-target={`#${id}`}
            hx-vals={JSON.stringify({ selected: text })}
          />
        )}
        <select id={id} name={field.name} aria-invalid={invalid} aria-describedby={described} required={required}>
          <ChoiceOptions choices={options} selected={text} />
        </select>
      </>
    );
  } else if (field.choices && field.kind.textual) {
    control = (
      <select id={id} name={field.name} aria-invalid={invalid} aria-describedby={described}>
        {field.choices.map((c) => (
          <option value={c} selected={text === c || (!text && c === field.default)}>
            {c}
          </option>
        ))}
      </select>
    );
  } else if (field.input === 'textarea' || (field.input === 'text' && (field.max ?? 0) > 255)) {
    control = (
      <textarea id={id} name={field.name} aria-invalid={invalid} aria-describedby={described}>
        {text}
      </textarea>
    );
  } else {
    const type = INPUT_TYPES[field.input];
    control = (
      <input
        id={id}
        name={field.name}
        type={type}
        value={type === 'password' ? '' : text}
        required={required}
        autocomplete={AUTOCOMPLETE[field.input]}
        inputMode={field.kind.inputMode}
        step={type === 'number' ? '1' : undefined}
        autoFocus={props.autoFocus}
        aria-invalid={invalid}
        aria-describedby={described}
      />
    );
  }
  return (
    <div class="field">
      <label for={id}>
        {field.label}
        {required ? ' (required)' : ''}
      </label>
      {control}
      {hint ? (
        <p class="field-hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
      <FieldError id={errorId} messages={errors} />
    </div>
  );
}

export function ErrorSummary({ errors }: { errors?: FieldErrors }) {
  if (!errors || Object.keys(errors).length === 0) return null;
  return (
    <div class="flash flash-error" role="alert">
      <p>
        <strong>Please correct the {Object.keys(errors).length === 1 ? 'field' : 'fields'} below.</strong>
      </p>
    </div>
  );
}
