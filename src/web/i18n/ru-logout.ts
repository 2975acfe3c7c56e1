import type { LogoutTexts } from './logout-texts.js';

/** The Russian texts of RP-initiated logout (CONTRACT.md §9). */
export const ruLogout: LogoutTexts = {
  confirmHeading: 'Выйти из аккаунта?',
  clientAsks: (client) => `«${client}» просит выйти из аккаунта. Это сайт по адресу`,
  unknownAsks: 'Сайт просит выйти из аккаунта этого сервиса.',
  signedInAs: 'Вы вошли как',
  effect: 'Когда сайт в следующий раз попросит этот аккаунт в этом браузере, нужно будет войти снова.',
  signOut: 'Выйти',
  staySignedIn: 'Остаться в аккаунте',
  signedOutHeading: 'Вы вышли из аккаунта',
  signedOutText: 'В этом браузере вы больше не вошли в этот сервис. Эту страницу можно закрыть.',
  backTo: (client) => `Вернуться на «${client}»`,
  signInAgain: 'Войти снова',
};
