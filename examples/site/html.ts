/**
 * Safe HTML for the example site: every value put into a template is escaped, unless it is itself
 * a fragment made by `html`. Nothing the identity provider returns (names, e-mail, avatar URL) or
 * the browser sends ever reaches the page unescaped.
 */

/** A piece of HTML that is already safe (built by `html`). */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for element content and for quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char] ?? char);
}

function render(value: unknown): string {
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  // Lets templates write `${condition && html`…`}`: false, null and undefined render nothing.
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

/** The tagged template: html`<p>${text}</p>` escapes `text`. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, index) => {
    out += render(value) + (strings[index + 1] ?? '');
  });
  return new SafeHtml(out);
}

/** A whole page around `body`. */
export function page(title: string, body: SafeHtml): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>
  body { font: 16px/1.5 system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; padding: 0 1rem; color: #222; }
  .card { border: 1px solid #ddd; border-radius: 8px; padding: 1rem 1.5rem; margin: 1rem 0; }
  .profile { display: flex; gap: 1rem; align-items: center; }
  .profile img { width: 64px; height: 64px; border-radius: 50%; object-fit: cover; }
  .muted { color: #666; }
  .notice { padding: .5rem 1rem; border-radius: 6px; background: #eef6ee; }
  .notice.problem { background: #fbeaea; }
  button, .button { font: inherit; padding: .4rem 1rem; border-radius: 6px; border: 1px solid #888;
    background: #f4f4f4; color: inherit; text-decoration: none; cursor: pointer; display: inline-block; }
  .primary { background: #1f5fbf; border-color: #1f5fbf; color: #fff; }
  form.inline { display: inline; }
</style>
</head>
<body>
<h1>Example site</h1>
${body}
</body>
</html>
`.value;
}
