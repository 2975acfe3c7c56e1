import type { commonEn } from './en-common.js';

/** The console's shared texts in Russian. */
export const commonRu: typeof commonEn = {
  console: 'Консоль',
  navigation: 'Разделы консоли',
  areas: {
    dashboard: 'Сводка',
    users: 'Пользователи',
    clients: 'Приложения',
    providers: 'Провайдеры входа',
    audit: 'Журнал аудита',
    platform: 'Платформа',
  },
  roles: { owner: 'Владелец', support: 'Поддержка', auditor: 'Аудитор' },
  signedInAs: (username: string, role: string) => `${username} · ${role}`,
  session: 'Сеанс консоли',
  leave: 'Выйти из консоли',
  enter: {
    title: 'Вход в консоль',
    intro: 'Консоль открывается со вторым фактором, на короткий отдельный сеанс.',
    codeLabel: 'Код из приложения-аутентификатора',
    codeHint: '6 цифр',
    submit: 'Войти',
    passkey: 'Использовать ключ доступа',
    wrongCode: 'Код неверный. Введите текущий.',
    locked: 'Слишком много неверных кодов: подождите несколько минут или используйте ключ доступа.',
    missing: 'Введите код из приложения-аутентификатора.',
    passkeyFailed: 'Не удалось проверить ключ доступа. Попробуйте ещё раз или введите код.',
  },
  reauth: {
    title: 'Подтвердите, что это вы',
    intro: (minutes: number) =>
      `Для этого действия нужно подтверждение вторым фактором не старше ${minutes} мин. Подтвердите кодом или ключом доступа.`,
    submit: 'Подтвердить',
  },
  sessionPage: {
    title: 'Сеанс консоли',
    role: 'Роль',
    entered: 'Подтверждён',
    provedAt: 'Последнее подтверждение',
    expires: 'Закончится',
    methods: { totp: 'приложением-аутентификатором', passkey: 'ключом доступа' },
  },
};
