import type { Locale } from './i18n/index.js';

/** A problem of a field as the page shows it, in the language it is written in. */
export interface ShownProblem {
  text: string;
  lang: Locale;
}

/** The addresses the clients service names in its messages (src/lib/redirect-uri.ts), in Russian. */
const WHAT_RU: Record<string, string> = {
  'redirect URI': 'Адрес возврата',
  'post-logout redirect URI': 'Адрес возврата после выхода',
  'back-channel logout URI': 'Адрес уведомления о выходе',
  'logo URI': 'Адрес логотипа',
};

/** Why an address was refused (the end of the service's message), in Russian. */
const WHY_RU: Array<[RegExp, string]> = [
  [/^is not an absolute URI$/, 'не абсолютный адрес'],
  [/^must not contain a fragment/, 'не должен содержать фрагмент (#)'],
  [/^must not contain credentials$/, 'не должен содержать имя и пароль'],
  [/^uses a forbidden scheme$/, 'запрещённая схема'],
  [/^must use https/, 'нужен https (http — только на 127.0.0.1, [::1] и localhost)'],
  [/^uses a custom scheme/, 'своя схема не годится для сайта на https: укажите адрес https'],
  [/^has an unsupported scheme$/, 'неподдерживаемая схема'],
  [/^is not registered for this client$/, 'не зарегистрирован у приложения'],
  [/^is both added and removed$/, 'и добавлен, и удалён'],
];

/** Whole messages of the clients service and its schemas, in Russian. */
const MESSAGES_RU: Array<[RegExp, string]> = [
  [/^name must not be empty$/, 'Название не может быть пустым.'],
  [/^name must be at most 100 characters$/, 'Название — не длиннее 100 символов.'],
  [
    /^site URL must be/,
    'Адрес сайта — абсолютный адрес https (http — только на 127.0.0.1, [::1] и localhost).',
  ],
  [
    /^at least one redirect URI is required, unless/,
    'Нужен хотя бы один адрес возврата, если приложению не разрешён вход на устройствах (RFC 8628).',
  ],
  [
    /^a client without redirect URIs keeps the device grant/,
    'Без адресов возврата приложение входит только на устройствах: чтобы отключить этот вход, сначала добавьте адрес возврата.',
  ],
  [/at most 20 redirect URIs$/, 'Не больше 20 адресов возврата.'],
  [/at most 20 post-logout redirect URIs$/, 'Не больше 20 адресов возврата после выхода.'],
  [/^logo URI must be at most 2048 characters$/, 'Адрес логотипа — не длиннее 2048 символов.'],
  [/^id_token_signed_response_alg must be/, 'Выберите алгоритм из списка.'],
  [/^the overlap must be/, 'Срок — целое число секунд от 0 до 604 800 (7 дней).'],
  [/^the wallet right is granted by the operators/, 'Право на кошелёк даёт оператор сервиса: запросите его.'],
  [
    /^only the operators of the service register/,
    'Официальное мобильное приложение регистрирует только оператор.',
  ],
  [/^the application already has the wallet right$/, 'У приложения уже есть право на кошелёк.'],
  [/^no account has this username$/, 'Нет аккаунта с таким именем пользователя.'],
  [/ already owns this application$/, 'Этот пользователь уже владелец приложения.'],
  [/^an application may have at most \d+ owners$/, 'У приложения может быть не больше 10 владельцев.'],
  [/^this account does not own the application$/, 'Этот аккаунт не владеет приложением.'],
  [/^uses must be a whole number/, 'Число регистраций — целое, от 1 до 1000.'],
  [/^the token must expire in/, 'Срок токена — от 1 минуты до 90 дней.'],
  [
    /^a client may have at most \d+ valid secrets/,
    'Действующих секретов может быть не больше 5: сначала отзовите один.',
  ],
  [
    /^this is the only secret of the client/,
    'Это единственный секрет приложения: сначала добавьте другой, затем отзовите этот.',
  ],
  [/^the expiry must be a time in the future$/, 'Срок действия должен быть в будущем.'],
  [/^the expiry must be a valid time$/, 'Укажите срок действия.'],
  [/^the secret already stops working/, 'Секрет и так перестанет действовать раньше.'],
  [
    /^An account may own at most \d+ applications/,
    'Достигнут предел числа ваших приложений: удалите одно, прежде чем создавать новое.',
  ],
];

/**
 * A message of the clients service or of the developer portal's services (written in English for
 * the CLI and the API) in the page's language: the
 * known ones translated, an address quoted as it was typed; any other stays in English, marked so.
 */
export function shownProblem(message: string, locale: Locale): ShownProblem {
  if (locale === 'en') return { text: message, lang: 'en' };
  for (const [pattern, text] of MESSAGES_RU) if (pattern.test(message)) return { text, lang: 'ru' };
  const address =
    /^(redirect URI|post-logout redirect URI|back-channel logout URI|logo URI) "(.*)" (.+)$/s.exec(message);
  const why = address && WHY_RU.find(([pattern]) => pattern.test(address[3] ?? ''));
  if (address && why) return { text: `${WHAT_RU[address[1] ?? '']} «${address[2]}»: ${why[1]}.`, lang: 'ru' };
  return { text: message, lang: 'en' };
}

/** Every field's problem as the page shows it. */
export function shownProblems(
  errors: Readonly<Record<string, string>>,
  locale: Locale,
): Record<string, ShownProblem> {
  return Object.fromEntries(
    Object.entries(errors).map(([field, message]) => [field, shownProblem(message, locale)]),
  );
}
