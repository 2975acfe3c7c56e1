import type { AccountSafetyTexts } from './account-safety-texts.js';

/** The Russian texts of the password form's choices, its confirmation and the e-mail confirmation. */
export const ruAccountSafety: AccountSafetyTexts = {
  signOutDevices: 'Также выйти на всех устройствах мобильного приложения',
  signOutDevicesHint: 'На каждом устройстве нужно будет войти снова с новым паролем.',
  revokeApps: 'Также закрыть доступ всем приложениям, которым я его дал',
  revokeAppsHint:
    'Рекомендуется, если вашим аккаунтом мог пользоваться кто-то другой: каждому приложению нужно будет снова дать доступ.',
  changedHeading: 'Пароль изменён',
  changedText: 'Во всех остальных браузерах выполнен выход. В этом браузере вы остаётесь, в новом сеансе.',
  devicesSignedOut: 'На всех устройствах мобильного приложения выполнен выход.',
  appsRevoked: 'Доступ всех приложений закрыт: каждому нужно будет дать его снова.',
  passkeysHeading: 'Ваши ключи доступа',
  passkeysIntro:
    'Ключ доступа продолжает впускать того, кто его добавил, каким бы ни был пароль. Удалите ключи, которых вы не узнаёте.',
  resetPasskeysIntro:
    'Ключ доступа продолжает впускать того, кто его добавил, каким бы ни был пароль. Если вы не узнаёте какой-то из них, удалите его после входа:',
  resetPasskeysLink: 'Безопасность и ключи доступа',
  passkeyCreated: 'Добавлен',
  remove: 'Удалить',
  removeLabel: (name) => `Удалить ключ доступа ${name}`,
  toAccount: 'Перейти в аккаунт',
  confirmFor: (email, username) => `Подтвердите, что ${email} — адрес аккаунта ${username}.`,
  changeFor: (email, username) => `Подтвердите, что ${email} станет адресом аккаунта ${username}.`,
  notYours:
    'Если вы не создавали этот аккаунт и ничего не просили, не нажимайте кнопку: закройте страницу, и ничего не изменится.',
  confirmedFor: (email, username) => `Адрес ${email} подтверждён для аккаунта ${username}.`,
  claimWithheld:
    'Этот адрес раньше подтвердил другой аккаунт: сайтам, на которые вы входите с этим аккаунтом, сообщается, что он не подтверждён.',
};
