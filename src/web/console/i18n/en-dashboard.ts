/** The console's dashboard texts in English. */
export const dashboardEn = {
  title: 'Dashboard',
  intro:
    'What the service did, from the counts every instance adds once a minute: the current minute is still being counted. Times in UTC.',
  range: 'Period',
  ranges: { hour: 'Last hour', day: 'Last day', week: 'Last week' },
  bucket: 'Each point',
  buckets: (minutes: number) =>
    minutes < 60 ? `${minutes} min` : minutes === 60 ? '1 hour' : `${minutes / 60} hours`,
  charts: {
    signIns: 'Sign-ins',
    tokens: 'Codes and tokens issued',
    charges: 'Wallet charges',
    coins: 'Coins charged',
    clientErrors: 'Refused requests (4xx), by route class',
    serverErrors: 'Server errors (5xx), by route class',
    rateLimited: 'Rate limited (429), by route class',
  },
  series: {
    sign_ins_ok: 'Signed in',
    sign_ins_failed: 'Failed',
    second_factor_failures: 'Second step failed',
    codes_issued: 'Codes',
    tokens_issued: 'Token sets',
    refreshes: 'Refreshes',
    charges: 'Charges',
    charged_minor_units: 'Coins',
    none: 'All routes',
  } as Record<string, string>,
  routeClasses: {
    oauth: 'OAuth',
    api: 'API',
    mobile: 'Mobile app',
    wallet: 'Wallet',
    console: 'Console',
    pages: 'Pages',
    other: 'Other',
  } as Record<string, string>,
  columns: { series: 'Series', total: 'Total', peak: 'Busiest point', peakAt: 'At (UTC)' },
  noScript: 'The charts need JavaScript; the tables give every number without it.',
};
