/*
 * What the sign-in pages say of an application its owners registered and no operator has reviewed
 * yet (CLIENT_REGISTRATION): the error page under `approval`, the mark on the consent page under `open`.
 */

export const appAwaitsReviewEn = {
  title: 'This application awaits review',
  message:
    'Its owners registered it recently, and the operators of this service have not reviewed it yet: until they approve it, only its owners can sign in to it. Try again later, or ask the site.',
};

export const appAwaitsReviewRu = {
  title: 'Приложение ждёт проверки',
  message:
    'Его владельцы недавно зарегистрировали его, а операторы сервиса ещё не проверили: пока они его не одобрят, войти в него могут только владельцы. Попробуйте позже или спросите сайт.',
};

export const notReviewedEn =
  'Not reviewed: this application was registered by its owners, and the operators of this service have not reviewed it yet.';

export const notReviewedRu =
  'Не проверено: это приложение зарегистрировали его владельцы, и операторы сервиса ещё не проверили его.';
