import { COMMON_PASSWORDS_COUNT } from '../../lib/common-passwords.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../lib/password.js';
import type { SignUpTexts } from './sign-up-texts.js';

/** "10 000", with the non-breaking space Russian groups digits with. */
const commonCount = COMMON_PASSWORDS_COUNT.toLocaleString('ru-RU');

/** The sign-up page, in Russian. */
export const ruSignUp: SignUpTexts = {
  heading: 'Создание аккаунта',
  correctFields: 'Исправьте отмеченные ниже поля.',
  usernameHint: 'От 3 до 32 символов: латинские буквы a–z, цифры и _, не только цифры.',
  emailHint:
    'Это единственный способ восстановить пароль, если вы его забудете: ссылка для сброса приходит на этот адрес. Без него забытый пароль не сбросить.',
  passwordHint: `Не менее ${PASSWORD_MIN_LENGTH} символов и не из ${commonCount} самых распространённых паролей — их подбирают первыми.`,
  submit: 'Создать аккаунт',
  haveAccount: 'Уже есть аккаунт?',
  signIn: 'Войти',
  problems: {
    username_format:
      'Имя пользователя должно содержать от 3 до 32 символов: латинские буквы a–z, цифры и _, и не состоять только из цифр.',
    username_reserved: 'Это имя зарезервировано, выберите другое.',
    username_taken: 'Это имя уже занято, выберите другое.',
    password_too_short: `Пароль должен быть не короче ${PASSWORD_MIN_LENGTH} символов.`,
    password_too_long: `Пароль должен быть не длиннее ${PASSWORD_MAX_LENGTH} символов.`,
    password_too_common: 'Это один из самых распространённых паролей, их подбирают первыми; выберите другой.',
    email_invalid: 'Введите правильный адрес электронной почты или оставьте поле пустым.',
    email_too_long: 'Адрес электронной почты должен быть не длиннее 254 символов.',
  },
};
