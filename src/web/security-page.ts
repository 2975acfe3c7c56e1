import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../context.js';
import { isMultiFactor } from '../lib/amr.js';
import { escapeHtml } from '../lib/html.js';
import { countUnusedRecoveryCodes } from '../modules/mfa/recovery-codes.repository.js';
import { pendingEnrolment, totpState } from '../modules/mfa/totp.service.js';
import { groupedKey } from '../modules/mfa/totp-code.js';
import { recoveryCodesScript } from './assets/stylesheet.js';
import { issueCsrfToken } from './csrf.js';
import type { PasskeyNotice } from './i18n/en-passkeys.js';
import { formatDate, messages } from './i18n/index.js';
import { destination, type Flow, flowQueryString } from './page-forms.js';
import { pageLocale, renderPage } from './pages.js';
import { passkeySectionData } from './passkeys-section.js';
import type { BrowserSession } from './session.js';
import { linkedProvidersSection } from './upstream/linked-providers.js';

export const SECURITY_PATH = '/account/security';
/** Where an authorization request goes on (page-forms.ts `destination`), as a form's action. */
const RESUME_PATH = '/api/v1/oauth/authorize/resume';

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
  /** What just happened to the account's links to providers. */
  providersNotice?: 'linked' | 'unlinked' | 'last_way';
  status?: number;
}

/** The enrolment QR code (RFC 6238 key as an `otpauth://` URI), drawn on the server as inline SVG. */
async function qrSvg(uri: string, label: string): Promise<string> {
  // Loaded with the first TOTP enrolment rather than at start-up.
  const { default: QRCode } = await import('qrcode');
  const svg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return svg.replace('<svg ', `<svg role="img" aria-label="${escapeHtml(label)}" class="qr" `);
}

/** What the page needs to show recovery codes just made, once: their file, and the way on. */
interface RecoverySave {
  codes: string[];
  /** The codes as a text file, a data: URL the page offers as a download (they exist nowhere else). */
  download: { href: string; filename: string };
  /** "I saved them" submits a GET form to the way on: the site's request, or this page again. */
  next: { action: string; fields: Array<[string, string]>; toSite: boolean };
  script: string;
}

function recoverySave(
  reply: FastifyReply,
  deps: Deps,
  user: { username: string },
  page: SecurityPageState & { recoveryCodes: string[] },
): RecoverySave {
  const locale = pageLocale(reply.request);
  const t = messages(locale).security.recoverySave;
  const service = `${reply.server.brand.name} (${new URL(deps.ctx.config.PUBLIC_URL).host})`;
  const text = [
    t.fileHeading(user.username, service),
    t.fileMade(formatDate(locale, deps.ctx.clock.now())),
    t.fileNote,
    '',
    ...page.recoveryCodes,
    '',
  ].join('\n');
  const { requestId, returnTo } = page.flow;
  const toSite = page.upgraded === true && requestId !== undefined;
  const fields: Array<[string, string]> = [];
  if (requestId) fields.push(['request', requestId]);
  if (returnTo && !toSite) fields.push(['return_to', returnTo]);
  return {
    codes: page.recoveryCodes,
    download: {
      href: `data:text/plain;charset=utf-8,${encodeURIComponent(text)}`,
      filename: `idp-recovery-codes-${user.username}.txt`,
    },
    next: { action: toSite ? RESUME_PATH : SECURITY_PATH, fields, toSite },
    script: recoveryCodesScript().href,
  };
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
  const providers = await linkedProvidersSection(request, deps, user.id);
  return renderPage(
    reply.code(page.status ?? 200),
    'security',
    {
      csrfToken: issueCsrfToken(request, reply, ctx),
      username: user.username,
      state,
      enrolment: enrolment && { key: groupedKey(enrolment.key), svg: await qrSvg(enrolment.uri, t.qrLabel) },
      remaining: state === 'on' ? await countUnusedRecoveryCodes(db, user.id) : 0,
      recovery: page.recoveryCodes
        ? recoverySave(reply, deps, user, { ...page, recoveryCodes: page.recoveryCodes })
        : null,
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
      providers,
      providersNotice: page.providersNotice ?? null,
    },
    // A provider's link button is answered with a redirect to the provider.
    { switchBase: `${SECURITY_PATH}${flowQueryString(page.flow)}`, formTargets: providers.formTargets },
  );
}
