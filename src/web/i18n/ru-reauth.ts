import type { ReauthTexts } from './reauth-texts.js';

/** The Russian texts of `/account/reauthenticate`. */
export const ruReauth: ReauthTexts = {
  heading: 'Подтвердите, что это вы',
  intro: (minutes) =>
    `Чтобы изменить способы входа в аккаунт или его адрес почты, скачать или удалить его данные, нужно недавно подтвердить, что это вы. Введите пароль; следующие ${minutes} мин. он не понадобится.`,
  signedInAs: 'Вы вошли как',
  passwordSubmit: 'Подтвердить',
  codeHeading: 'Или введите код',
  codeLabel: 'Код из приложения-аутентификатора или резервный код',
  codeSubmit: 'Подтвердить кодом',
  errors: {
    missing: 'Введите пароль или код.',
    wrong_password: 'Неверный пароль.',
    wrong_code: 'Код неверен или уже использован.',
  },
  backToAccount: 'Вернуться в аккаунт',
};
