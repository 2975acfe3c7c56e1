import type { LogoutTexts } from './logout-texts.js';

/** The Russian texts of RP-initiated logout. */
export const ruLogout: LogoutTexts = {
  confirmHeading: 'Выйти из аккаунта?',
  clientAsks: (client) => `«${client}» просит выйти из аккаунта. Это сайт по адресу`,
  unknownAsks: 'Сайт просит выйти из аккаунта этого сервиса.',
  signedInAs: 'Вы вошли как',
  effect: 'Чтобы снова пользоваться аккаунтом в этом браузере, нужно будет войти заново.',
  signOut: 'Выйти',
  staySignedIn: 'Остаться в аккаунте',
  signedOutHeading: 'Вы вышли из аккаунта',
  signedOutText: 'В этом браузере вход в сервис завершён. Эту страницу можно закрыть.',
  backTo: (client) => `Вернуться на «${client}»`,
  signInAgain: 'Войти снова',
};
