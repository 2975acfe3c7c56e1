import type { Messages } from './messages.js';
import { ruDeviceTitles } from './ru-device.js';
import { ruUpstreamTitles } from './ru-upstream.js';

/** The Russian titles of the pages (the document's <title>), by template. */
export const ruTitles: Messages['titles'] = {
  signin: 'Вход',
  signup: 'Создание аккаунта',
  account: 'Ваш аккаунт',
  consent: 'Разрешить доступ?',
  error: 'Что-то пошло не так',
  profile: 'Ваш профиль',
  password: 'Смена пароля',
  export: 'Скачать ваши данные',
  delete: 'Удаление аккаунта',
  deleted: 'Аккаунт удалён',
  verify: 'Подтверждение адреса почты',
  verified: 'Адрес почты подтверждён',
  forgot: 'Забыли пароль?',
  'forgot-sent': 'Проверьте почту',
  reset: 'Новый пароль',
  'reset-done': 'Пароль изменён',
  'password-changed': 'Пароль изменён',
  email: 'Адрес электронной почты',
  security: 'Безопасность',
  'second-factor': 'Двухэтапный вход',
  reauthenticate: 'Подтвердите, что это вы',
  ...ruUpstreamTitles,
  ...ruDeviceTitles,
  logout: 'Выйти из аккаунта?',
  'signed-out': 'Выход выполнен',
  home: 'Добро пожаловать',
};
