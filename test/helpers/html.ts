/*
 * Reading the forms of the service's pages: no test runner needed, so the benchmark uses them too.
 */

export function unescapeHtml(text: string): string {
  return text
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&#34;', '"')
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&amp;', '&');
}

export function attribute(tag: string, name: string): string | undefined {
  const match = new RegExp(`\\s${name}="([^"]*)"`).exec(tag);
  return match?.[1] === undefined ? undefined : unescapeHtml(match[1]);
}

/** The forms of a page: action → the form's HTML. */
export function forms(html: string): Array<{ action: string; html: string }> {
  return [...html.matchAll(/<form\b[^>]*>[\s\S]*?<\/form>/g)].map((match) => ({
    action: attribute(match[0].slice(0, match[0].indexOf('>') + 1), 'action') ?? '',
    html: match[0],
  }));
}

export function inputs(formHtml: string): Array<{ name: string; type: string; value?: string; tag: string }> {
  return [...formHtml.matchAll(/<input\b[^>]*>/g)].map((match) => ({
    name: attribute(match[0], 'name') ?? '',
    type: attribute(match[0], 'type') ?? 'text',
    value: attribute(match[0], 'value'),
    tag: match[0],
  }));
}

export function formWithAction(html: string, action: string): string {
  const form = forms(html).find((candidate) => candidate.action === action);
  if (!form) throw new Error(`no form posting to ${action} in:\n${html}`);
  return form.html;
}

export function hiddenFieldsOf(formHtml: string): Record<string, string> {
  return Object.fromEntries(
    inputs(formHtml)
      .filter((input) => input.type === 'hidden')
      .map((input) => [input.name, input.value ?? '']),
  );
}

/** The hidden fields (CSRF token, request, return_to…) of the form posting to `action`. */
export function hiddenFields(html: string, action: string): Record<string, string> {
  return hiddenFieldsOf(formWithAction(html, action));
}
