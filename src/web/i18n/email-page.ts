import type { EmailPageTexts } from './email-page-texts.js';

/** `/account/email` in English (a file of its own keeps en.ts and ru.ts short). */
export const emailPageEn: EmailPageTexts = {
  heading: 'Your e-mail address',
  currentAddress: 'Current address',
  noAddress: 'Your account has no e-mail address.',
  confirmed: 'confirmed',
  notConfirmed: 'not confirmed',
  resendText: 'A confirmation link was sent to this address when you gave it. Lost it, or did it expire?',
  resendSubmit: 'Send a new confirmation link',
  pending: (email) =>
    `A link was sent to ${email}. Your address changes once you open it and press its button (within 24 hours).`,
  changeHeading: 'Use another address',
  newEmail: 'New e-mail address',
  newEmailHint:
    'A link is sent there; your address changes only once you open it. The old address is then told.',
  currentPassword: 'Current password',
  currentPasswordHint: 'Password resets go to this address, so confirm that it is you.',
  submit: 'Send the link',
  correctFields: 'Correct the fields marked below.',
  backToAccount: 'Back to your account',
  problems: {
    email_missing: 'Enter the new e-mail address.',
    email_invalid: 'Enter a valid e-mail address.',
    email_too_long: 'The e-mail address must be at most 254 characters.',
    email_unchanged: 'This is already your address; enter another one.',
    too_many_messages: 'We sent 5 links to new addresses in the last hour. Try again in an hour.',
    current_password_missing: 'Enter your current password.',
    current_password_wrong: 'This is not your current password.',
  },
};

/** `/account/email` in Russian. */
export const emailPageRu: EmailPageTexts = {
  heading: 'Адрес электронной почты',
  currentAddress: 'Текущий адрес',
  noAddress: 'У вашего аккаунта нет адреса электронной почты.',
  confirmed: 'подтверждён',
  notConfirmed: 'не подтверждён',
  resendText:
    'Когда вы указали этот адрес, на него пришла ссылка для подтверждения. Потеряли её или она устарела?',
  resendSubmit: 'Отправить новую ссылку',
  pending: (email) =>
    `Ссылка отправлена на ${email}. Адрес изменится, когда вы откроете её и нажмёте кнопку (в течение 24 часов).`,
  changeHeading: 'Другой адрес',
  newEmail: 'Новый адрес электронной почты',
  newEmailHint:
    'На него придёт ссылка; адрес изменится, только когда вы её откроете. На старый адрес придёт уведомление.',
  currentPassword: 'Текущий пароль',
  currentPasswordHint: 'На этот адрес приходят ссылки для сброса пароля, поэтому подтвердите, что это вы.',
  submit: 'Отправить ссылку',
  correctFields: 'Исправьте отмеченные ниже поля.',
  backToAccount: 'Вернуться в аккаунт',
  problems: {
    email_missing: 'Введите новый адрес электронной почты.',
    email_invalid: 'Введите правильный адрес электронной почты.',
    email_too_long: 'Адрес электронной почты должен быть не длиннее 254 символов.',
    email_unchanged: 'Это уже ваш адрес; введите другой.',
    too_many_messages: 'За последний час мы уже отправили 5 ссылок на новые адреса. Попробуйте через час.',
    current_password_missing: 'Введите текущий пароль.',
    current_password_wrong: 'Это не ваш текущий пароль.',
  },
};
