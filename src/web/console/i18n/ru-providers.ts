import { plural } from '../../i18n/index.js';
import type { providersEn } from './en-providers.js';

const accounts = (links: number) =>
  plural(
    'ru',
    { one: '{n} аккаунт', few: '{n} аккаунта', many: '{n} аккаунтов', other: '{n} аккаунта' },
    links,
  );

/** The console's sign-in providers texts in Russian. */
export const providersRu: typeof providersEn = {
  title: 'Провайдеры входа',
  intro:
    'Через каких провайдеров можно войти («Продолжить с …»). Адрес обратного вызова каждого зарегистрируйте у провайдера как redirect URI.',
  none: 'Провайдеров пока нет: входят только по паролю или ключу доступа.',
  columns: {
    name: 'Имя',
    kind: 'Вид',
    displayName: 'Надпись на кнопке',
    enabled: 'Включён',
    trustAmr: 'Доверие его MFA',
    linked: 'Связанных аккаунтов',
    callback: 'Адрес обратного вызова',
  },
  kinds: {
    oidc: 'Провайдер OpenID',
    github: 'GitHub',
    google: 'Google',
    apple: 'Apple',
  },
  addTitle: 'Добавить провайдера',
  addSubmit: 'Добавить',
  back: 'Все провайдеры',
  settings: 'Настройки',
  editTitle: 'Изменить настройки',
  save: 'Сохранить изменения',
  fields: {
    name: 'Имя',
    nameHint:
      'Входит в адрес обратного вызова: от 2 до 32 символов a-z, 0-9 и «-», первая — буква. Позже его не изменить.',
    kind: 'Вид',
    displayName: 'Надпись на кнопке после «Продолжить с»',
    displayNameHint: 'Для Google, GitHub и Apple можно не заполнять; провайдеру OpenID она нужна.',
    issuer: 'Адрес издателя (issuer)',
    issuerHint: 'Пусто — свой адрес вида; провайдеру OpenID он нужен. https (http — только на loopback).',
    apiUrl: 'Адрес API (только GitHub)',
    apiUrlHint: 'Пусто — https://api.github.com.',
    clientId: 'Идентификатор клиента (client id)',
    clientSecret: 'Секрет клиента',
    clientSecretHint: 'Не для Apple. Хранится зашифрованным и не показывается.',
    clientSecretKeep: 'Не показывается. Оставьте пустым, чтобы сохранить текущий.',
    appleTeamId: 'Team ID Apple (только Apple)',
    appleKeyId: 'Key ID Apple (только Apple)',
    applePrivateKey: 'Закрытый ключ Apple (только Apple)',
    applePrivateKeyHint: 'Содержимое файла .p8. Хранится зашифрованным и не показывается.',
    applePrivateKeyKeep: 'Не показывается. Оставьте пустым, чтобы сохранить текущий ключ.',
    scopes: 'Области доступа (scopes)',
    scopesHint: 'Через пробел. Пусто — свои для вида.',
    enabled: 'Показывать кнопку и принимать вход через него',
    trustAmr: 'Его MFA заменяет собственный второй фактор аккаунта',
    apple: 'Только Apple',
  },
  correctFields: 'Некоторые поля нужно исправить: смотрите сообщения рядом с ними.',
  retypeSecrets: 'Секреты больше не показываются: введите их ещё раз.',
  fieldProblem: 'Не принято:',
  problems: {
    name: 'Имя — от 2 до 32 символов: строчные латинские буквы, цифры и дефис, первая — буква.',
    taken: 'Провайдер с таким именем уже есть.',
    kind: 'Выберите вид из списка.',
    required: 'Заполните это поле.',
    requiredOidc: 'Провайдеру OpenID это поле нужно.',
    requiredApple: 'Для Apple это поле нужно.',
    https:
      'Нужен адрес https без параметров запроса и фрагмента (http — только на 127.0.0.1, [::1] и localhost).',
    appleId: 'Нужно 10 заглавных латинских букв или цифр.',
    appleKey: 'Нужен PEM ключа P-256 в формате PKCS#8 — файл .p8 от Apple.',
    scopes: 'Области разделяются одним пробелом, без кавычек и обратной косой черты.',
    confirm: 'Введённое имя не совпадает с именем провайдера.',
  },
  tooLong: (max: number) => `Не длиннее ${max} символов.`,
  yes: 'да',
  no: 'нет',
  nothing: 'нет',
  state: { enabled: 'Включён', disabled: 'Отключён' },
  registerCallback: (url: string) => `Зарегистрируйте у провайдера этот redirect URI: ${url}`,
  accessTitle: 'Вход через него',
  disableIntro:
    'Отключение убирает его кнопку и запрещает вход через него; связи аккаунтов сохраняются до повторного включения.',
  disable: 'Отключить провайдера',
  enable: 'Включить провайдера',
  removeTitle: 'Удалить провайдера',
  /** The issuer field's hint on a provider with links (docs/operating.md: changing an issuer). */
  issuerLinks: (links: number) =>
    `${plural('ru', { one: '{n} аккаунт связан', few: '{n} аккаунта связаны', many: '{n} аккаунтов связаны', other: '{n} аккаунта связаны' }, links)} по этому издателю: с новым эти связи останутся в прошлом, и каждый при следующем входе начнёт заново. Меняйте его, только если старого издателя больше нет.`,
  removeIntro: (links: number) =>
    links === 0
      ? 'С ним не связан ни один аккаунт.'
      : `${plural('ru', { one: '{n} аккаунт потеряет', few: '{n} аккаунта потеряют', many: '{n} аккаунтов потеряют', other: '{n} аккаунта потеряют' }, links)} связь с ним: кто входил только через него, восстановит доступ по адресу электронной почты.`,
  removeConfirm: 'Введите имя провайдера для подтверждения',
  remove: 'Удалить провайдера',
  done: {
    added: 'Провайдер добавлен.',
    updated: 'Настройки сохранены.',
    unchanged: 'Ничего не изменилось.',
    disabled: 'Провайдер отключён: его кнопки больше нет.',
    enabled: 'Провайдер включён: его кнопка снова видна.',
  },
  removed: (links: number) => `Провайдер удалён; связь потеряли: ${accounts(links)}.`,
};
