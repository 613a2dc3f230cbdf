/**
 * The one way the sandbox builds HTML: a tagged template that escapes every interpolated value,
 * unless the value is itself HTML built here, or text handed to {@link raw} on purpose.
 * Our own few lines, no library.
 */

/** HTML that may go into a page as it is: built by {@link html}, or declared trusted with {@link raw}. */
export class Html {
  readonly #text: string;

  constructor(text: string) {
    this.#text = text;
  }

  toString(): string {
    return this.#text;
  }
}

/** What may be interpolated: text and numbers are escaped, HTML is kept, lists are joined, `false`, `null` and `undefined` are left out. */
export type HtmlValue = Html | string | number | false | null | undefined | readonly HtmlValue[];

/** Text made safe for HTML element content and quoted attribute values. */
function escaped(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

function render(value: HtmlValue): string {
  if (value instanceof Html) return value.toString();
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === false || value === null || value === undefined) return '';
  return escaped(String(value));
}

/** HTML from a template: every `${value}` is escaped unless it is {@link Html}. */
export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): Html {
  let text = strings[0] ?? '';
  for (const [index, value] of values.entries()) text += render(value) + (strings[index + 1] ?? '');
  return new Html(text);
}

/**
 * The escape hatch: `text` goes into the page unescaped. Only for markup the sandbox itself wrote
 * (its style sheets and scripts), never for anything a request or a record carries.
 */
export function raw(text: string): Html {
  return new Html(text);
}
