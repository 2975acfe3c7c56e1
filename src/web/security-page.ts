import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../context.js';
import { isMultiFactor } from '../lib/amr.js';
import { escapeHtml } from '../lib/html.js';
import { countUnusedRecoveryCodes } from '../modules/mfa/recovery-codes.repository.js';
import { pendingEnrolment, totpState } from '../modules/mfa/totp.service.js';
import { groupedKey } from '../modules/mfa/totp-code.js';
import { issueCsrfToken } from './csrf.js';
import type { PasskeyNotice } from './i18n/en-passkeys.js';
import { messages } from './i18n/index.js';
import { destination, type Flow, flowQueryString } from './page-forms.js';
import { pageLocale, renderPage } from './pages.js';
import { passkeySectionData } from './passkeys-section.js';
import type { BrowserSession } from './session.js';

export const SECURITY_PATH = '/account/security';

/** What one rendering of `/account/security` says besides the account's state. */
export interface SecurityPageState {
  flow: Flow;
  notice?: 'enabled' | 'disabled' | PasskeyNotice;
  /** Recovery codes just made: shown now, and never again. */
  recoveryCodes?: string[];
  wrongCode?: boolean;
  disableWrong?: boolean;
  /** The session was just given its second factor: the page only shows the codes and the way on. */
  upgraded?: boolean;
  status?: number;
}

/** The enrolment QR code (RFC 6238 key as an `otpauth://` URI), drawn on the server as inline SVG. */
async function qrSvg(uri: string, label: string): Promise<string> {
  // Loaded with the first TOTP enrolment rather than at start-up.
  const { default: QRCode } = await import('qrcode');
  const svg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return svg.replace('<svg ', `<svg role="img" aria-label="${escapeHtml(label)}" class="qr" `);
}

/**
 * Renders `/account/security`: the TOTP state, an enrolment's QR code and key
 * (only until its first code), recovery codes (only when just made), the forms, the passkeys.
 */
export async function renderSecurityPage(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: Deps,
  session: BrowserSession,
  user: { id: number; username: string },
  page: SecurityPageState,
): Promise<FastifyReply> {
  const { db, ctx } = deps;
  const t = messages(pageLocale(request)).security;
  const state = await totpState(db, user.id);
  const enrolment = state === 'pending' ? await pendingEnrolment(db, ctx, user) : null;
  return renderPage(
    reply.code(page.status ?? 200),
    'security',
    {
      csrfToken: issueCsrfToken(request, reply, ctx),
      username: user.username,
      state,
      enrolment: enrolment && { key: groupedKey(enrolment.key), svg: await qrSvg(enrolment.uri, t.qrLabel) },
      remaining: state === 'on' ? await countUnusedRecoveryCodes(db, user.id) : 0,
      recoveryCodes: page.recoveryCodes ?? null,
      notice: page.notice ?? null,
      wrongCode: page.wrongCode ?? false,
      disableWrong: page.disableWrong ?? false,
      upgraded: page.upgraded ?? false,
      // A site asked for a second factor and this session has none (authorize, acr_values=mfa).
      stepUp: page.flow.requestId !== undefined && !isMultiFactor(session.amr) && !page.upgraded,
      requestId: page.flow.requestId,
      returnTo: page.flow.returnTo,
      continueHref: page.flow.requestId || page.flow.returnTo ? destination(page.flow) : null,
      passkeys: await passkeySectionData(deps, user.id),
    },
    { switchBase: `${SECURITY_PATH}${flowQueryString(page.flow)}` },
  );
}
