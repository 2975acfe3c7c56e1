import type { dashboardEn } from './en-dashboard.js';

/** The console's dashboard texts in Russian. */
export const dashboardRu: typeof dashboardEn = {
  title: 'Сводка',
  intro:
    'Что делал сервис, по счётчикам, которые каждый экземпляр добавляет раз в минуту: текущая минута ещё считается. Время в UTC.',
  range: 'Период',
  ranges: { hour: 'Последний час', day: 'Последние сутки', week: 'Последняя неделя' },
  bucket: 'Одна точка',
  buckets: (minutes: number) =>
    minutes < 60 ? `${minutes} мин` : minutes === 60 ? '1 час' : `${minutes / 60} ч`,
  charts: {
    signIns: 'Входы',
    tokens: 'Выданные коды и токены',
    charges: 'Списания из кошельков',
    coins: 'Списано монет',
    clientErrors: 'Отклонённые запросы (4xx) по классам маршрутов',
    serverErrors: 'Ошибки сервера (5xx) по классам маршрутов',
    rateLimited: 'Превышен лимит (429) по классам маршрутов',
  },
  series: {
    sign_ins_ok: 'Успешные',
    sign_ins_failed: 'Неудачные',
    second_factor_failures: 'Неверный второй шаг',
    codes_issued: 'Коды',
    tokens_issued: 'Наборы токенов',
    refreshes: 'Обновления',
    charges: 'Списания',
    charged_minor_units: 'Монеты',
    none: 'Все маршруты',
  },
  routeClasses: {
    oauth: 'OAuth',
    api: 'API',
    mobile: 'Мобильное приложение',
    wallet: 'Кошелёк',
    console: 'Консоль',
    pages: 'Страницы',
    other: 'Прочее',
  },
  columns: { series: 'Ряд', total: 'Всего', peak: 'Пик', peakAt: 'Когда (UTC)' },
  noScript: 'Графикам нужен JavaScript; таблицы дают все числа и без него.',
};
