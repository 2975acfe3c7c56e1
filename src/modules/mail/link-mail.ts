import { escapeHtml } from '../../lib/html.js';
import type { MailLocale, MailMessage } from './mail.service.js';

/** What a message carrying one link says, in one language. */
export interface LinkMailTexts {
  subject: string;
  greeting: (username: string) => string;
  /** What the link is for, and how long it works. */
  body: string;
  /** The HTML part's link text. */
  button: string;
  /** What to do when the message was not expected. */
  ignore: string;
}

/**
 * A message that carries one link (a verification, a change of address, a password reset): a
 * plain-text part with the bare link and an HTML part with it as a link and as text, both in the
 * recipient's language.
 */
export function linkMail(
  kind: string,
  texts: Record<MailLocale, LinkMailTexts>,
  input: { to: string; username: string; locale: MailLocale; link: string },
): MailMessage {
  const t = texts[input.locale];
  const link = escapeHtml(input.link);
  return {
    kind,
    to: input.to,
    locale: input.locale,
    subject: t.subject,
    text: `${t.greeting(input.username)}\n\n${t.body}\n\n${input.link}\n\n${t.ignore}\n`,
    html:
      `<p>${escapeHtml(t.greeting(input.username))}</p>\n<p>${escapeHtml(t.body)}</p>\n` +
      `<p><a href="${link}">${escapeHtml(t.button)}</a></p>\n<p>${link}</p>\n<p>${escapeHtml(t.ignore)}</p>\n`,
  };
}
