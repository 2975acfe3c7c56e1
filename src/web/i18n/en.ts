import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../lib/password.js';
import { ALL_SCOPES, SCOPES, type Scope } from '../../modules/oauth/scopes.js';
import { appAwaitsReviewEn, notReviewedEn } from './app-review-texts.js';
import { emailPageEn } from './email-page.js';
import { enAccountData } from './en-account-data.js';
import { enAccountSafety } from './en-account-safety.js';
import { enDevice } from './en-device.js';
import { enEntry } from './en-entry.js';
import { enLogout } from './en-logout.js';
import { enPasskeys } from './en-passkeys.js';
import { enPasswordReset } from './en-password-reset.js';
import { enReauth } from './en-reauth.js';
import { enSecurity } from './en-security.js';
import { enSignUp } from './en-sign-up.js';
import { enTitles } from './en-titles.js';
import { enUpstream } from './en-upstream.js';
import type { LocaleDefinition } from './messages.js';

export const en: LocaleDefinition = {
  dateLocale: 'en-GB',
  messages: {
    languageName: 'English',
    layout: {
      skipToContent: 'Skip to content',
      language: 'Language',
      showPassword: 'Show',
      hidePassword: 'Hide',
    },
    titles: enTitles,
    fields: { username: 'Username', password: 'Password', email: 'E-mail', optional: '(optional)' },
    signin: {
      heading: 'Sign in',
      submit: 'Sign in',
      noAccount: 'No account yet?',
      createAccount: 'Create an account',
      forgotPassword: 'Forgot your password?',
      errors: {
        missing_credentials: 'Enter your username and password.',
        wrong_credentials: 'Wrong username or password.',
        account_disabled: 'This account has been disabled, so it cannot sign in.',
      },
    },
    signup: enSignUp,
    consent: {
      heading: (client) => `Allow ${client} to use your account?`,
      siteAt: (client) => `${client} is the site at`,
      signedInAs: 'Signed in as',
      notYou: 'Not you?',
      willGet: 'It will be able to:',
      emailHint: 'Untick the e-mail to allow the rest without sharing it.',
      walletWarning: (client) => `${client} will be able to charge coins from your wallet.`,
      walletAdvice: 'Allow this only if you trust this site with your money.',
      allow: 'Allow',
      deny: 'Deny',
      revokeLater: {
        before: 'You can revoke this access at any time on',
        link: 'your account page',
        after: '.',
      },
      notReviewed: notReviewedEn,
    },
    // The scopes' own descriptions (src/modules/oauth/scopes.ts) are the English texts.
    scopes: Object.fromEntries(ALL_SCOPES.map((scope) => [scope, SCOPES[scope].description])) as Record<
      Scope,
      string
    >,
    account: {
      heading: 'Your account',
      username: 'Username',
      displayName: 'Display name',
      contents: 'On this page',
      avatar: 'Your avatar',
      emailSection: 'E-mail',
      emailAddress: 'Address',
      emailStatus: 'Status',
      emailConfirmed: 'Confirmed',
      emailNotConfirmed: 'Not confirmed',
      noEmail: 'Your account has no e-mail address.',
      changeEmail: 'Change e-mail',
      addEmail: 'Add an e-mail address',
      apps: 'Connected apps',
      appsCount: { one: '{n} app can use your account.', other: '{n} apps can use your account.' },
      noApps: 'You have not allowed any app to use your account.',
      allowed: 'It can:',
      allowedOn: 'Allowed on',
      revoke: 'Revoke access',
      revokeFor: (app) => ` for ${app}`,
      devices: 'Signed-in devices',
      devicesCount: {
        one: 'The mobile app is signed in on {n} device.',
        other: 'The mobile app is signed in on {n} devices.',
      },
      noDevices: 'The mobile app is not signed in on any device.',
      deviceSignedInOn: 'Signed in on',
      deviceLastUsedOn: 'last used on',
      signOutDevice: 'Sign out this device',
      signOut: 'Sign out',
      notices: {
        revoked: 'Access revoked. The app can no longer use your account, unless you allow it again.',
        unknown_app: 'That app had no access to your account.',
        device_signed_out: 'The device is signed out. The app on it must sign in again.',
        unknown_device: 'That device was not signed in.',
        profile_updated: 'Your profile is saved.',
        password_changed:
          'Your password is changed. Other browsers signed in to your account were signed out.',
        email_change_sent:
          'A link was sent to the new address. Your address changes once you open it; until then it stays as it is.',
        verification_sent: 'A new confirmation link was sent to your address.',
        console_left: 'You left the console. Your account stays signed in.',
      },
    },
    errors: {
      app_awaits_review: appAwaitsReviewEn,
      console_forbidden: {
        title: 'Not for your role',
        message:
          'Your account has no console role, or its role does not allow this page or action. An owner can change roles with idp admins grant.',
      },
      console_needs_second_factor: {
        title: 'Set up a second factor first',
        message:
          'The console opens only with a second factor: add an authenticator app or a passkey to your account, then come back.',
        link: 'Security settings',
      },
      form_expired: {
        title: 'This form has expired',
        message: 'The form could not be checked. Go back, reload the page and try again.',
      },
      form_incomplete: {
        title: 'Something is missing',
        message: 'The form was not complete. Go back and try again.',
      },
      request_expired: {
        title: 'This request has expired',
        message: 'This sign-in request has expired or was already used. Go back to the site and start again.',
      },
      verification_link_invalid: {
        title: 'This confirmation link does not work',
        message:
          'The link was already used, is more than 24 hours old, or is for an address the account no longer has. Sign in and ask for a new one.',
      },
      mail_limit: {
        title: 'Too many e-mails for now',
        message: 'This account was sent 5 messages of this kind in the last hour. Try again in an hour.',
      },
      reset_link_invalid: {
        title: 'This password reset link does not work',
        message:
          'The link was already used, is more than 30 minutes old, or a newer link was sent since (only the newest one works).',
        link: 'Ask for a new link',
      },
      logout_invalid: {
        title: 'This sign-out link is not valid',
        message:
          'The site that sent you here asked to sign you out in a way this service cannot accept, so nothing was changed. You can sign out on your account page.',
      },
      logout_expired: {
        title: 'This sign-out request has expired',
        message:
          'The page was open too long. Go back to the site and sign out again, or sign out on your account page.',
      },
      invalid_link: {
        title: 'This sign-in link is not valid',
        message:
          'The site that sent you here gave a link this service cannot accept. Go back to the site and try again; if it happens again, tell the site’s owners.',
      },
      bad_request: {
        title: 'This request is not valid',
        message: 'The page could not use what was sent. Go back and try again.',
      },
      forbidden: { title: 'Not allowed', message: 'You cannot do this here.' },
      not_found: {
        title: 'Not found',
        message: 'There is nothing at this address.',
        link: 'Go to the home page',
      },
      method_not_allowed: { title: 'Not allowed', message: 'This page cannot be used this way.' },
      too_large: { title: 'Too much data', message: 'The form sent more data than the service accepts.' },
      rate_limited: {
        title: 'Too many attempts',
        message: 'Wait a little before you try again.',
        link: 'Back to sign-in',
      },
      unavailable: {
        title: 'Temporarily unavailable',
        message: 'The service cannot answer right now. Try again in a few minutes.',
      },
      server_error: {
        title: 'Something went wrong',
        message: 'An unexpected error happened on our side. Try again later.',
      },
      retryIn: { one: 'You can try again in {n} second.', other: 'You can try again in {n} seconds.' },
      details: 'Technical details:',
      requestId: 'If you contact support, quote this request id:',
      toAccount: 'Go to your account',
      redirectUriReceived: 'The address the request asked to return to (redirect_uri):',
      redirectUriRegistered: 'The addresses registered for this app are on:',
    },
    settings: {
      profileSection: 'Profile',
      editProfile: 'Change your display name and avatar',
      passwordSection: 'Password & security',
      changePassword: 'Change your password',
      backToAccount: 'Back to your account',
      correctFields: 'Correct the fields marked below.',
      profileHeading: 'Your profile',
      displayName: 'Display name',
      displayNameHint: 'Up to 64 characters, any language. Leave it empty to show your username instead.',
      avatarUrl: 'Avatar URL',
      avatarUrlHint: 'An https:// address of a picture. Leave it empty for the default avatar.',
      saveProfile: 'Save profile',
      passwordHeading: 'Change your password',
      currentPassword: 'Current password',
      newPassword: 'New password',
      newPasswordHint: `At least ${PASSWORD_MIN_LENGTH} characters, not one of the most common passwords.`,
      passwordConfirm: 'Repeat the new password',
      otherSessionsEnd:
        'Every other browser signed in to your account will be signed out; this one stays signed in.',
      submitPassword: 'Change password',
      problems: {
        display_name_invalid:
          'A display name is at most 64 characters, without control or invisible characters.',
        avatar_url_invalid:
          'Enter an https:// address (at most 2048 characters) or a path starting with a single /, or leave the field empty.',
        current_password_missing: 'Enter your current password.',
        current_password_wrong: 'This is not your current password.',
        password_too_short: `The new password must be at least ${PASSWORD_MIN_LENGTH} characters.`,
        password_too_long: `The new password must be at most ${PASSWORD_MAX_LENGTH} characters.`,
        password_too_common:
          'This is one of the most common passwords, which attackers try first; choose another.',
        password_mismatch: 'The two new passwords are not the same.',
      },
    },
    dataPage: enAccountData,
    emailVerify: {
      heading: 'Confirm your e-mail address',
      intro: 'Press the button to confirm that this address is yours.',
      submit: 'Confirm the address',
      verifiedHeading: 'Your e-mail address is confirmed',
      verifiedText: 'Thank you: the address is now confirmed.',
      verifiedAddress: (email) => `Thank you: ${email} is now your confirmed address.`,
      toAccount: 'Go to your account',
    },
    passwordReset: enPasswordReset,
    passkeys: enPasskeys,
    emailPage: emailPageEn,
    security: enSecurity,
    logout: enLogout,
    reauth: enReauth,
    upstream: enUpstream,
    device: enDevice,
    accountSafety: enAccountSafety,
    entry: enEntry,
  },
};
