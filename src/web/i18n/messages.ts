import type { PasswordChangeProblem } from '../../modules/accounts/password.service.js';
import type { ProfileProblem } from '../../modules/accounts/profile.service.js';
import type { Scope } from '../../modules/oauth/scopes.js';
import type { AccountSafetyTexts } from './account-safety-texts.js';
import type { DeviceTexts } from './device-texts.js';
import type { EmailPageTexts } from './email-page-texts.js';
import type { PasskeyMessages } from './en-passkeys.js';
import type { EntryTexts } from './entry-texts.js';
import type { LogoutTexts } from './logout-texts.js';
import type { PageTitles } from './page-titles.js';
import type { ReauthTexts } from './reauth-texts.js';
import type { SecurityTexts } from './security-texts.js';
import type { SignUpTexts } from './sign-up-texts.js';
import type { UpstreamTexts } from './upstream-texts.js';

/** Texts with a count, by CLDR plural category; `{n}` is the count. `other` is required. */
export type PluralForms = Partial<Record<Intl.LDMLPluralRule, string>> & { other: string };

/** Why sign-in failed, as the sign-in page says it. */
export type SignInError = 'missing_credentials' | 'wrong_credentials' | 'account_disabled';

/** The notices of the account page (`/account?notice=…`). */
export const ACCOUNT_NOTICES = [
  'revoked',
  'unknown_app',
  'device_signed_out',
  'unknown_device',
  'profile_updated',
  'password_changed',
  'email_change_sent',
  'verification_sent',
  'console_left',
] as const;
export type AccountNotice = (typeof ACCOUNT_NOTICES)[number];

export function isAccountNotice(value: unknown): value is AccountNotice {
  return typeof value === 'string' && (ACCOUNT_NOTICES as readonly string[]).includes(value);
}

/** What an error page says. */
export type ErrorPageKind =
  | 'form_expired'
  | 'form_incomplete'
  | 'request_expired'
  | 'invalid_link'
  /** An e-mail verification link that is unknown, used, expired, or for an address changed since. */
  | 'verification_link_invalid'
  /** A password reset link that is unknown, used, expired or superseded by a newer one. */
  | 'reset_link_invalid'
  /** The account's hourly limit of messages of one kind is reached. */
  | 'mail_limit'
  /** A logout request with a hint, client or post_logout_redirect_uri that does not check out. */
  | 'logout_invalid'
  /** The logout confirmation form was left open longer than its request lives. */
  | 'logout_expired'
  /** The console: an account without a console role, or a role without the right for this page or action. */
  | 'console_forbidden'
  /** The console needs a second factor the operator's account does not have yet. */
  | 'console_needs_second_factor'
  /** CLIENT_REGISTRATION=approval: an application no operator approved yet signs in only its owners. */
  | 'app_awaits_review'
  | 'bad_request'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'too_large'
  | 'rate_limited'
  | 'unavailable'
  | 'server_error';

/** A sentence with a link inside it: `before` <a>`link`</a> `after`. */
export interface LinkedText {
  before: string;
  link: string;
  after: string;
}

/** Every text of the pages, in one language. */
export interface Messages {
  /** The language's own name, as the language switch shows it. */
  languageName: string;
  layout: {
    skipToContent: string;
    /** The accessible name of the language switch. */
    language: string;
    /** The toggle after each password field (public/show-password.js): reveal, and hide again. */
    showPassword: string;
    hidePassword: string;
  };
  titles: PageTitles;
  fields: { username: string; password: string; email: string; optional: string };
  signin: {
    heading: string;
    submit: string;
    noAccount: string;
    createAccount: string;
    forgotPassword: string;
    errors: Record<SignInError, string>;
  };
  signup: SignUpTexts;
  consent: {
    heading: (client: string) => string;
    /** Followed by the site's URL. */
    siteAt: (client: string) => string;
    /** Followed by @username. */
    signedInAs: string;
    notYou: string;
    willGet: string;
    emailHint: string;
    walletWarning: (client: string) => string;
    walletAdvice: string;
    allow: string;
    deny: string;
    revokeLater: LinkedText;
    /** CLIENT_REGISTRATION=open: the application was not reviewed by the operators yet. */
    notReviewed: string;
  };
  /** What each scope shares, for the consent and account pages. */
  scopes: Record<Scope, string>;
  account: {
    heading: string;
    username: string;
    displayName: string;
    /** The in-page contents list of the account page's sections. */
    contents: string;
    avatar: string;
    /** The e-mail section: the address and whether it is confirmed, or that there is none. */
    emailSection: string;
    emailAddress: string;
    emailStatus: string;
    emailConfirmed: string;
    emailNotConfirmed: string;
    noEmail: string;
    changeEmail: string;
    addEmail: string;
    apps: string;
    appsCount: PluralForms;
    noApps: string;
    allowed: string;
    allowedOn: string;
    revoke: string;
    /** Completes "Revoke access" for screen readers, with the app's name. */
    revokeFor: (app: string) => string;
    devices: string;
    devicesCount: PluralForms;
    noDevices: string;
    /** "Signed in on <date>, last used on <date>". */
    deviceSignedInOn: string;
    deviceLastUsedOn: string;
    signOutDevice: string;
    signOut: string;
    notices: Record<AccountNotice, string>;
  };
  /** `link`: the text of the way out the page offers for its kind (error-pages.ts `ERROR_PAGE_LINKS`, a 429's sign-in). */
  errors: Record<ErrorPageKind, { title: string; message: string; link?: string }> & {
    retryIn: PluralForms;
    details: string;
    requestId: string;
    toAccount: string;
    /** An unregistered redirect_uri: followed by the value received, then the registered hosts. */
    redirectUriReceived: string;
    redirectUriRegistered: string;
  };
  /** The profile and password pages (`/account/profile`, `/account/password`) and their links on the account page. */
  settings: {
    /** The account page's sections that lead to them. */
    profileSection: string;
    editProfile: string;
    passwordSection: string;
    changePassword: string;
    backToAccount: string;
    correctFields: string;
    profileHeading: string;
    displayName: string;
    displayNameHint: string;
    avatarUrl: string;
    avatarUrlHint: string;
    saveProfile: string;
    passwordHeading: string;
    currentPassword: string;
    newPassword: string;
    newPasswordHint: string;
    passwordConfirm: string;
    otherSessionsEnd: string;
    submitPassword: string;
    problems: Record<ProfileProblem | PasswordChangeProblem, string>;
  };
  /** The account's data: its export, its deletion, and their sections of the account page. */
  dataPage: {
    /** The account page's "Your data" section. */
    yourData: string;
    yourDataText: string;
    exportLink: string;
    /** The account page's "Danger zone" section. */
    dangerZone: string;
    dangerZoneText: string;
    deleteLink: string;
    exportHeading: string;
    exportIntro: string;
    /** What the download holds, one list item each. */
    exportContents: string[];
    exportNoSecrets: string;
    exportSubmit: string;
    backToAccount: string;
    deleteHeading: string;
    deleteWarning: string;
    /** What happens at once, one list item each. */
    deleteEffects: string[];
    deleteKept: string;
    exportFirst: LinkedText;
    deletePasswordHint: string;
    /** An account without a password (made through a provider) types its username to confirm. */
    deleteUsernameLabel: string;
    deleteUsernameHint: (username: string) => string;
    deleteSubmit: string;
    errors: { missing_password: string; wrong_password: string; wrong_username: string };
    deletedHeading: string;
    deletedText: string;
    deletedSignUp: string;
  };
  /** `/email/verify`: the confirm button a verification link opens, and its answer. */
  emailVerify: {
    heading: string;
    intro: string;
    submit: string;
    verifiedHeading: string;
    verifiedText: string;
    /** The same, naming the address now confirmed. */
    verifiedAddress: (email: string) => string;
    toAccount: string;
  };
  /** `/password/forgot` and `/password/reset` and the pages that answer them. */
  passwordReset: {
    forgotHeading: string;
    forgotIntro: string;
    login: string;
    loginMissing: string;
    forgotSubmit: string;
    backToSignIn: string;
    sentHeading: string;
    sentText: string;
    sentNothing: string;
    resetHeading: string;
    /** Followed by the account's username. */
    resetFor: string;
    correctFields: string;
    revokeApps: string;
    revokeAppsHint: string;
    signedOutEverywhere: string;
    resetSubmit: string;
    doneHeading: string;
    doneText: string;
    signIn: string;
  };
  /** `/account/email`: the address, its state, a pending change, and the forms. */
  emailPage: EmailPageTexts;
  /** `/account/security` and `/signin/second-factor`. */
  security: SecurityTexts;
  passkeys: PasskeyMessages;
  /** RP-initiated logout: its confirmation and the signed-out page. */
  logout: LogoutTexts;
  /** `/account/reauthenticate`: a fresh proof before changing how the account signs in. */
  reauth: ReauthTexts;
  /** What a new password ends (the password form, its confirmation, passkeys) and the e-mail confirmation's naming of the account. */
  accountSafety: AccountSafetyTexts;
  /** The landing page (`/`), and the app named on the sign-in and consent pages. */
  entry: EntryTexts;
  /** Sign-in through another provider (Google, GitHub, Apple, any OpenID provider). */
  upstream: UpstreamTexts;
  device: DeviceTexts;
}

/** A language of the pages: its texts, and the Intl locale of its dates ("20 May 2026"). */
export interface LocaleDefinition {
  dateLocale: string;
  messages: Messages;
}
