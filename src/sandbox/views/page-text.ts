/** The payment page's words in each language, and which language a page is shown in. */
import type { TestCardholderName } from '../../testing/index.js';
import { PAYMENT_PAGE_SECONDS } from '../api/index.js';
import type { CardFormProblem } from '../validation.js';

/** How a payment that did not complete ended, as its outcome page tells it. */
export type Outcome =
  | { kind: 'declined'; name: Exclude<TestCardholderName, 'ERROR'> | undefined }
  | { kind: 'error' | 'expired' | 'cancelled' | 'failed' };

// Languages: the page follows the session's shopperLocale, Spanish for `es` and `es-*`, English for
// any other tag. Every visible string is in these tables, one per language.

type Language = 'en' | 'es';

export interface Strings {
  /** For numbers (`25.99` or `25,99`). */
  numberLocale: string;
  banner: string;
  payTitle(amount: string): string;
  timeLeft: string;
  cardNumber: string;
  expiryDate: string;
  month: string;
  year: string;
  cvc: string;
  holderName: string;
  pay(amount: string): string;
  paying: string;
  cancel: string;
  summary(count: number): string;
  problems: Record<CardFormProblem, string>;
  hintTitle: string;
  hintIntro: string;
  hintNames: Record<TestCardholderName, string>;
  outcomes: Record<Outcome['kind'], { title: string; message: string }>;
  declineReasons: Record<Exclude<TestCardholderName, 'ERROR'>, string>;
  noMoney: string;
  returnNotice(seconds: number): string;
  returnManual: string;
  returnStopped: string;
  returnButton: string;
  stay: string;
  notFoundTitle: string;
  notFoundMessage: string;
  methodTitle: string;
  methodMessage: string;
}

const MINUTES = PAYMENT_PAGE_SECONDS / 60;

const STRINGS: Record<Language, Strings> = {
  en: {
    numberLocale: 'en-GB',
    banner: 'Sandbox payment page: a simulation, no real card is charged.',
    payTitle: (amount) => `Pay ${amount}`,
    timeLeft: 'Time left to pay:',
    cardNumber: 'Card number',
    expiryDate: 'Expiry date',
    month: 'Month (MM)',
    year: 'Year (YY)',
    cvc: 'Security code (CVC)',
    holderName: 'Cardholder name',
    pay: (amount) => `Pay ${amount}`,
    paying: 'Processing the payment…',
    cancel: 'Cancel payment',
    summary: (count) => (count === 1 ? 'Please correct this field:' : `Please correct these ${count} fields:`),
    problems: {
      cardNumberLength: 'Enter a card number of 13 to 19 digits.',
      cardNumberLuhn: 'This card number is not valid.',
      expiryMonth: 'Enter the expiry month, 1 to 12.',
      expiryYear: 'Enter the expiry year as two digits (YY).',
      expired: 'This card has expired.',
      cvc3: 'Enter the 3-digit security code.',
      cvc4: 'Enter the 4-digit security code.',
      holderNameShort: 'Enter the cardholder name (at least 3 characters).',
    },
    hintTitle: 'Test mode',
    hintIntro: 'Any cardholder name pays, except these, which make the payment fail (upper or lower case):',
    hintNames: {
      DECLINED: 'declined by the issuer',
      CARD_EXPIRED: 'expired card',
      INVALID_CARD: 'invalid card number',
      NOT_ENOUGH_BALANCE: 'insufficient funds',
      CVC_DECLINED: 'security code refused',
      FRAUD: 'suspected fraud',
      ERROR: 'processor error',
    },
    outcomes: {
      declined: { title: 'Payment declined', message: 'The payment was not authorised.' },
      error: {
        title: 'Payment could not be processed',
        message: 'The payment processor had a technical error, so the payment was not made.',
      },
      expired: { title: 'Time is up', message: `The ${MINUTES} minutes to pay have passed, so the payment was not made.` },
      cancelled: { title: 'Payment cancelled', message: 'The payment was cancelled.' },
      failed: { title: 'Payment not completed', message: 'The payment was not completed.' },
    },
    declineReasons: {
      DECLINED: "The card's issuer did not authorise the payment.",
      CARD_EXPIRED: 'The card has expired.',
      INVALID_CARD: 'The card number is not valid.',
      NOT_ENOUGH_BALANCE: 'The card does not have enough funds.',
      CVC_DECLINED: 'The security code (CVC) was not accepted.',
      FRAUD: 'The payment was stopped as suspected fraud.',
    },
    noMoney: 'No money was taken.',
    returnNotice: (seconds) => `You will be taken back to the shop in ${seconds} seconds.`,
    returnManual: 'Use the button to go back to the shop.',
    returnStopped: 'Automatic return stopped. Use the button to go back to the shop.',
    returnButton: 'Return to the shop',
    stay: 'Stay on this page',
    notFoundTitle: 'Payment not found',
    notFoundMessage: 'This payment link is not valid.',
    methodTitle: 'Method not allowed',
    methodMessage: 'This page only takes GET and POST requests.',
  },
  es: {
    numberLocale: 'es-ES',
    banner: 'Página de pago del sandbox: una simulación, no se cobra ninguna tarjeta real.',
    payTitle: (amount) => `Pagar ${amount}`,
    timeLeft: 'Tiempo para pagar:',
    cardNumber: 'Número de tarjeta',
    expiryDate: 'Fecha de caducidad',
    month: 'Mes (MM)',
    year: 'Año (AA)',
    cvc: 'Código de seguridad (CVC)',
    holderName: 'Nombre del titular',
    pay: (amount) => `Pagar ${amount}`,
    paying: 'Procesando el pago…',
    cancel: 'Cancelar el pago',
    summary: (count) => (count === 1 ? 'Corrija este campo:' : `Corrija estos ${count} campos:`),
    problems: {
      cardNumberLength: 'Introduzca un número de tarjeta de 13 a 19 cifras.',
      cardNumberLuhn: 'Este número de tarjeta no es válido.',
      expiryMonth: 'Introduzca el mes de caducidad, de 1 a 12.',
      expiryYear: 'Introduzca el año de caducidad con dos cifras (AA).',
      expired: 'Esta tarjeta ha caducado.',
      cvc3: 'Introduzca el código de seguridad de 3 cifras.',
      cvc4: 'Introduzca el código de seguridad de 4 cifras.',
      holderNameShort: 'Introduzca el nombre del titular (al menos 3 caracteres).',
    },
    hintTitle: 'Modo de prueba',
    hintIntro: 'Cualquier nombre de titular paga, salvo estos, que hacen fallar el pago (en mayúsculas o minúsculas):',
    hintNames: {
      DECLINED: 'denegado por el emisor',
      CARD_EXPIRED: 'tarjeta caducada',
      INVALID_CARD: 'número de tarjeta no válido',
      NOT_ENOUGH_BALANCE: 'saldo insuficiente',
      CVC_DECLINED: 'código de seguridad rechazado',
      FRAUD: 'sospecha de fraude',
      ERROR: 'error del procesador',
    },
    outcomes: {
      declined: { title: 'Pago denegado', message: 'El pago no se autorizó.' },
      error: { title: 'No se pudo procesar el pago', message: 'El procesador de pagos tuvo un error técnico y el pago no se realizó.' },
      expired: { title: 'Se acabó el tiempo', message: `Han pasado los ${MINUTES} minutos para pagar y el pago no se realizó.` },
      cancelled: { title: 'Pago cancelado', message: 'Se canceló el pago.' },
      failed: { title: 'Pago no completado', message: 'El pago no se completó.' },
    },
    declineReasons: {
      DECLINED: 'El emisor de la tarjeta no autorizó el pago.',
      CARD_EXPIRED: 'La tarjeta ha caducado.',
      INVALID_CARD: 'El número de tarjeta no es válido.',
      NOT_ENOUGH_BALANCE: 'La tarjeta no tiene saldo suficiente.',
      CVC_DECLINED: 'No se aceptó el código de seguridad (CVC).',
      FRAUD: 'El pago se detuvo por sospecha de fraude.',
    },
    noMoney: 'No se ha cobrado nada.',
    returnNotice: (seconds) => `Volverá a la tienda dentro de ${seconds} segundos.`,
    returnManual: 'Use el botón para volver a la tienda.',
    returnStopped: 'Vuelta automática detenida. Use el botón para volver a la tienda.',
    returnButton: 'Volver a la tienda',
    stay: 'Quedarme en esta página',
    notFoundTitle: 'Pago no encontrado',
    notFoundMessage: 'Este enlace de pago no es válido.',
    methodTitle: 'Método no permitido',
    methodMessage: 'Esta página solo admite peticiones GET y POST.',
  },
};

/** The page's language and the `lang` of its `<html>`, for a BCP-47 tag (the session's `shopperLocale`). */
export interface PageLocale {
  language: Language;
  lang: string;
  text: Strings;
}

export function localeOf(tag: string | null | undefined): PageLocale {
  const value = (tag ?? '').trim();
  const language: Language = /^es(-|$)/i.test(value) ? 'es' : 'en';
  // The tag itself when it names the language shown (es-MX stays es-MX); the bare language otherwise.
  const lang = /^[a-z]{2,3}(-[a-z0-9]{1,8})*$/i.test(value) && value.toLowerCase().startsWith(language) ? value : language;
  return { language, lang, text: STRINGS[language] };
}

/** For a page without a session (an unknown link): the first language the browser asks for. */
export function requestLocale(request: { readonly headers: { get(name: string): string | null } }): PageLocale {
  return localeOf(/^\s*([a-z]{2,3}(-[a-z0-9]{1,8})*)/i.exec(request.headers.get('accept-language') ?? '')?.[1]);
}
