import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../lib/password.js';
import { appAwaitsReviewRu, notReviewedRu } from './app-review-texts.js';
import { emailPageRu } from './email-page.js';
import type { LocaleDefinition } from './messages.js';
import { ruAccountData } from './ru-account-data.js';
import { ruAccountSafety } from './ru-account-safety.js';
import { ruDevice } from './ru-device.js';
import { ruEntry } from './ru-entry.js';
import { ruLogout } from './ru-logout.js';
import { ruPasskeys } from './ru-passkeys.js';
import { ruPasswordReset } from './ru-password-reset.js';
import { ruReauth } from './ru-reauth.js';
import { ruSecurity } from './ru-security.js';
import { ruSignUp } from './ru-sign-up.js';
import { ruTitles } from './ru-titles.js';
import { ruUpstream } from './ru-upstream.js';

export const ru: LocaleDefinition = {
  dateLocale: 'ru-RU',
  messages: {
    languageName: 'Русский',
    layout: {
      skipToContent: 'Перейти к содержимому',
      language: 'Язык',
      showPassword: 'Показать',
      hidePassword: 'Скрыть',
    },
    titles: ruTitles,
    fields: {
      username: 'Имя пользователя',
      password: 'Пароль',
      email: 'Электронная почта',
      optional: '(необязательно)',
    },
    signin: {
      heading: 'Вход',
      submit: 'Войти',
      noAccount: 'Ещё нет аккаунта?',
      createAccount: 'Создать аккаунт',
      forgotPassword: 'Забыли пароль?',
      errors: {
        missing_credentials: 'Введите имя пользователя и пароль.',
        wrong_credentials: 'Неверное имя пользователя или пароль.',
        account_disabled: 'Этот аккаунт отключён, войти в него нельзя.',
      },
    },
    signup: ruSignUp,
    consent: {
      heading: (client) => `Разрешить «${client}» доступ к вашему аккаунту?`,
      siteAt: (client) => `«${client}» — это сайт`,
      signedInAs: 'Вы вошли как',
      notYou: 'Это не вы?',
      willGet: 'Сайт получит:',
      emailHint: 'Снимите отметку с электронной почты, чтобы разрешить остальное, не сообщая адрес.',
      walletWarning: (client) => `«${client}» сможет списывать монеты с вашего кошелька.`,
      walletAdvice: 'Разрешайте это, только если доверяете этому сайту свои деньги.',
      allow: 'Разрешить',
      deny: 'Отклонить',
      revokeLater: {
        before: 'Отозвать доступ можно в любой момент на',
        link: 'странице аккаунта',
        after: '.',
      },
      notReviewed: notReviewedRu,
    },
    scopes: {
      openid: 'Подтверждение вашей личности (вход на сайт)',
      profile: 'Имя пользователя, отображаемое имя, аватар, привязанный игровой аккаунт и метка',
      email: 'Адрес электронной почты и отметка о том, подтверждён ли он',
      verified: 'Уровень верификации и значок',
      wallet: 'Списание монет с вашего кошелька и просмотр сделанных списаний',
      offline_access: 'Доступ, даже когда вы не на сайте (пока вы его не отзовёте)',
    },
    account: {
      heading: 'Ваш аккаунт',
      username: 'Имя пользователя',
      displayName: 'Отображаемое имя',
      contents: 'На этой странице',
      avatar: 'Ваш аватар',
      emailSection: 'Электронная почта',
      emailAddress: 'Адрес',
      emailStatus: 'Состояние',
      emailConfirmed: 'Подтверждён',
      emailNotConfirmed: 'Не подтверждён',
      noEmail: 'У аккаунта нет адреса электронной почты.',
      changeEmail: 'Изменить адрес',
      addEmail: 'Добавить адрес',
      apps: 'Подключённые приложения',
      appsCount: {
        one: 'Доступ к аккаунту есть у {n} приложения.',
        few: 'Доступ к аккаунту есть у {n} приложений.',
        many: 'Доступ к аккаунту есть у {n} приложений.',
        other: 'Доступ к аккаунту есть у {n} приложения.',
      },
      noApps: 'Вы ещё не разрешили ни одному приложению доступ к аккаунту.',
      allowed: 'Что разрешено:',
      allowedOn: 'Доступ разрешён',
      revoke: 'Отозвать доступ',
      revokeFor: (app) => ` у приложения «${app}»`,
      devices: 'Устройства, на которых выполнен вход',
      devicesCount: {
        one: 'Вход в мобильное приложение выполнен на {n} устройстве.',
        few: 'Вход в мобильное приложение выполнен на {n} устройствах.',
        many: 'Вход в мобильное приложение выполнен на {n} устройствах.',
        other: 'Вход в мобильное приложение выполнен на {n} устройства.',
      },
      noDevices: 'Вы не вошли в мобильное приложение ни на одном устройстве.',
      deviceSignedInOn: 'Вход выполнен',
      deviceLastUsedOn: 'последнее использование —',
      signOutDevice: 'Завершить сеанс на устройстве',
      signOut: 'Выйти',
      notices: {
        revoked:
          'Доступ отозван. Приложение больше не сможет пользоваться вашим аккаунтом, пока вы снова не разрешите.',
        unknown_app: 'У этого приложения не было доступа к вашему аккаунту.',
        device_signed_out: 'Сеанс на устройстве завершён. Приложению на нём нужно будет войти снова.',
        unknown_device: 'На этом устройстве не был выполнен вход.',
        profile_updated: 'Профиль сохранён.',
        password_changed: 'Пароль изменён. В других браузерах выполнен выход из вашего аккаунта.',
        email_change_sent:
          'Ссылка отправлена на новый адрес. Адрес изменится, когда вы её откроете; до тех пор он остаётся прежним.',
        verification_sent: 'На ваш адрес отправлена новая ссылка для подтверждения.',
        console_left: 'Вы вышли из консоли. Аккаунт остаётся в системе.',
      },
    },
    errors: {
      app_awaits_review: appAwaitsReviewRu,
      console_forbidden: {
        title: 'Недоступно для вашей роли',
        message:
          'У вашего аккаунта нет роли в консоли, или эта роль не позволяет открыть страницу или выполнить действие. Владелец может изменить роль командой idp admins grant.',
      },
      console_needs_second_factor: {
        title: 'Сначала включите второй фактор',
        message:
          'Консоль открывается только со вторым фактором: добавьте в аккаунт приложение-аутентификатор или ключ доступа и вернитесь.',
        link: 'Настройки безопасности',
      },
      form_expired: {
        title: 'Срок действия формы истёк',
        message: 'Не удалось проверить форму. Вернитесь назад, обновите страницу и попробуйте снова.',
      },
      form_incomplete: {
        title: 'Чего-то не хватает',
        message: 'Форма заполнена не полностью. Вернитесь назад и попробуйте снова.',
      },
      request_expired: {
        title: 'Срок действия запроса истёк',
        message: 'Этот запрос на вход устарел или уже использован. Вернитесь на сайт и начните заново.',
      },
      verification_link_invalid: {
        title: 'Ссылка для подтверждения не работает',
        message:
          'Ссылкой уже воспользовались, ей больше 24 часов или она для адреса, которого у аккаунта больше нет. Войдите и запросите новую.',
      },
      mail_limit: {
        title: 'Слишком много писем',
        message: 'За последний час этому аккаунту уже отправлено 5 таких писем. Попробуйте через час.',
      },
      reset_link_invalid: {
        title: 'Ссылка для сброса пароля не работает',
        message:
          'Ссылкой уже воспользовались, ей больше 30 минут или с тех пор была отправлена новая (работает только самая новая).',
        link: 'Запросить новую ссылку',
      },
      logout_invalid: {
        title: 'Ссылка для выхода недействительна',
        message:
          'Сайт, который направил вас сюда, попросил выйти из аккаунта так, как сервис не может принять, поэтому ничего не изменилось. Выйти можно на странице аккаунта.',
      },
      logout_expired: {
        title: 'Срок действия запроса на выход истёк',
        message:
          'Страница была открыта слишком долго. Вернитесь на сайт и выйдите снова или выйдите на странице аккаунта.',
      },
      invalid_link: {
        title: 'Ссылка для входа недействительна',
        message:
          'Сайт, который направил вас сюда, передал ссылку, которую сервис не может принять. Вернитесь на сайт и попробуйте снова; если ошибка повторится, сообщите о ней владельцам сайта.',
      },
      bad_request: {
        title: 'Неверный запрос',
        message: 'Страница не смогла обработать отправленные данные. Вернитесь назад и попробуйте снова.',
      },
      forbidden: { title: 'Действие запрещено', message: 'Здесь это сделать нельзя.' },
      not_found: { title: 'Страница не найдена', message: 'По этому адресу ничего нет.', link: 'На главную' },
      method_not_allowed: {
        title: 'Действие запрещено',
        message: 'Эту страницу нельзя использовать таким образом.',
      },
      too_large: {
        title: 'Слишком много данных',
        message: 'Форма отправила больше данных, чем принимает сервис.',
      },
      rate_limited: {
        title: 'Слишком много попыток',
        message: 'Подождите немного, прежде чем пробовать снова.',
        link: 'Вернуться ко входу',
      },
      unavailable: {
        title: 'Сервис временно недоступен',
        message: 'Сервис сейчас не может ответить. Попробуйте снова через несколько минут.',
      },
      server_error: {
        title: 'Что-то пошло не так',
        message: 'На нашей стороне произошла непредвиденная ошибка. Попробуйте позже.',
      },
      retryIn: {
        one: 'Попробовать снова можно через {n} секунду.',
        few: 'Попробовать снова можно через {n} секунды.',
        many: 'Попробовать снова можно через {n} секунд.',
        other: 'Попробовать снова можно через {n} секунды.',
      },
      details: 'Технические подробности:',
      requestId: 'Если будете писать в поддержку, укажите номер запроса:',
      toAccount: 'Перейти в аккаунт',
      redirectUriReceived: 'Адрес возврата в запросе (redirect_uri):',
      redirectUriRegistered: 'Зарегистрированные адреса приложения находятся на:',
    },
    settings: {
      profileSection: 'Профиль',
      editProfile: 'Изменить отображаемое имя и аватар',
      passwordSection: 'Пароль и безопасность',
      changePassword: 'Сменить пароль',
      backToAccount: 'Вернуться в аккаунт',
      correctFields: 'Исправьте отмеченные ниже поля.',
      profileHeading: 'Ваш профиль',
      displayName: 'Отображаемое имя',
      displayNameHint:
        'До 64 символов, на любом языке. Оставьте пустым, чтобы вместо него показывалось имя пользователя.',
      avatarUrl: 'Адрес аватара',
      avatarUrlHint: 'Адрес картинки, начинающийся с https://. Оставьте пустым для стандартного аватара.',
      saveProfile: 'Сохранить профиль',
      passwordHeading: 'Смена пароля',
      currentPassword: 'Текущий пароль',
      newPassword: 'Новый пароль',
      newPasswordHint: `Не менее ${PASSWORD_MIN_LENGTH} символов, не из числа самых распространённых паролей.`,
      passwordConfirm: 'Повторите новый пароль',
      otherSessionsEnd:
        'Во всех других браузерах будет выполнен выход из аккаунта; в этом вы останетесь в нём.',
      submitPassword: 'Сменить пароль',
      problems: {
        display_name_invalid:
          'Отображаемое имя — не длиннее 64 символов, без управляющих и невидимых символов.',
        avatar_url_invalid:
          'Введите адрес, начинающийся с https:// (не длиннее 2048 символов), или путь, начинающийся с одной /, либо оставьте поле пустым.',
        current_password_missing: 'Введите текущий пароль.',
        current_password_wrong: 'Это не ваш текущий пароль.',
        password_too_short: `Новый пароль должен быть не короче ${PASSWORD_MIN_LENGTH} символов.`,
        password_too_long: `Новый пароль должен быть не длиннее ${PASSWORD_MAX_LENGTH} символов.`,
        password_too_common:
          'Это один из самых распространённых паролей, их подбирают первыми; выберите другой.',
        password_mismatch: 'Новые пароли не совпадают.',
      },
    },
    dataPage: ruAccountData,
    emailVerify: {
      heading: 'Подтвердите адрес электронной почты',
      intro: 'Нажмите кнопку, чтобы подтвердить, что это ваш адрес.',
      submit: 'Подтвердить адрес',
      verifiedHeading: 'Адрес электронной почты подтверждён',
      verifiedText: 'Спасибо: адрес подтверждён.',
      verifiedAddress: (email) => `Спасибо: теперь ваш подтверждённый адрес — ${email}.`,
      toAccount: 'Перейти в аккаунт',
    },
    passwordReset: ruPasswordReset,
    passkeys: ruPasskeys,
    emailPage: emailPageRu,
    security: ruSecurity,
    logout: ruLogout,
    reauth: ruReauth,
    upstream: ruUpstream,
    device: ruDevice,
    accountSafety: ruAccountSafety,
    entry: ruEntry,
  },
};
