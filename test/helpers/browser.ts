import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';

/** A browser: keeps the cookies the service sets and sends them back, as a real one does. */
export class Browser {
  readonly cookies = new Map<string, string>();
  constructor(private readonly app: FastifyInstance) {}

  async get(url: string): Promise<LightMyRequestResponse> {
    return this.keep(await this.app.inject({ method: 'GET', url, headers: this.cookieHeader() }));
  }

  async post(url: string, form: Record<string, string>): Promise<LightMyRequestResponse> {
    return this.keep(
      await this.app.inject({
        method: 'POST',
        url,
        headers: { ...this.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams(form).toString(),
      }),
    );
  }

  /** GETs a page and POSTs its form with the page's own hidden fields (CSRF token included) plus `fields`. */
  async submit(pageUrl: string, action: string, fields: Record<string, string>) {
    const page = await this.get(pageUrl);
    expect(page.statusCode).toBe(200);
    return this.post(action, { ...hiddenFields(page.body, action), ...fields });
  }

  private cookieHeader(): Record<string, string> {
    if (this.cookies.size === 0) return {};
    return { cookie: [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ') };
  }

  private keep(res: LightMyRequestResponse): LightMyRequestResponse {
    for (const cookie of res.cookies as Array<{
      name: string;
      value: string;
      maxAge?: number;
      expires?: Date;
    }>) {
      const expired =
        cookie.maxAge === 0 || (cookie.expires !== undefined && cookie.expires.getTime() < Date.now());
      if (expired || cookie.value === '') this.cookies.delete(cookie.name);
      else this.cookies.set(cookie.name, cookie.value);
    }
    return res;
  }
}

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
