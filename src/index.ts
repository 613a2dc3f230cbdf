export { PaymentClient } from './client.js';
export { APIPromise, type WithResponse } from './core/api-promise.js';
export { DEADLINE_LEAD_MS, type Deadline } from './core/deadline.js';
export {
  ApiError,
  type ApiErrorDetails,
  AuthenticationError,
  ConfigurationError,
  ConflictError,
  ConnectionError,
  ErrorCode,
  IdempotencyConflictError,
  type IdempotencyConflictReason,
  InvalidRequestError,
  NotFoundError,
  PaymentServiceError,
  PermissionDeniedError,
  PosPaymentPendingError,
  type PosRecoveryState,
  RateLimitError,
  RedirectDataError,
  type RedirectDataErrorReason,
  type RedirectMismatch,
  RedirectMismatchError,
  type RequestContext,
  RequestValidationError,
  ResponseValidationError,
  type ResumeOptions,
  ServerError,
  TerminalBusyError,
  TerminalCommunicationError,
  TimeoutError,
  type ValidationIssue,
  WebhookNotConfirmedError,
  type WebhookNotConfirmedReason,
  WebhookParseError,
} from './core/errors.js';
export { posPaymentKey } from './core/idempotency.js';
export type { ClientHooks, ClientOptions, Environment, Logger, ResolvedOptions, RetryInfo } from './core/options.js';
export { type Page, Paginator } from './core/pagination.js';
export type { CheckPosPaymentOptions, PosPaymentCheck } from './core/pos-check.js';
export type {
  CreatePosPaymentOptions,
  DeadlineOption,
  PreparedPosPayment,
  RecoveredPosPayment,
  RecoveryOptions,
  ResumeRecoveryOptions,
  WaitForFinalStatusOptions,
} from './core/recovery.js';
export type { RetryBudgetOptions, RetryClass } from './core/retry.js';
export type { RequestOptions } from './core/transport.js';
export {
  createFollowUps,
  DEFAULT_FOLLOW_UP_SCHEDULE,
  type FollowUps,
  type FollowUpsOptions,
  type SessionEndedContext,
} from './follow-ups/follow-ups.js';
export { type MemoryFollowUpQueueOptions, memoryFollowUpQueue } from './follow-ups/memory-queue.js';
export type { FollowUpClock, FollowUpJob, FollowUpQueue, FollowUpTarget } from './follow-ups/queue.js';
export type { FollowUpReader } from './follow-ups/read.js';
export { followUpTargetKey } from './follow-ups/target.js';
export {
  type ClientSecrets,
  type DecodeRedirectOptions,
  decodeRedirectData,
  type ExpectedRedirect,
  REDIRECT_ENCRYPTIONS,
  REDIRECT_SIGNING_ALGORITHMS,
  REDIRECT_TOKEN_MAX_CHARS,
  type RedirectAlgorithm,
  verifyRedirect,
} from './helpers/redirect.js';
export { type ParsedReference, parseReference, type ReferenceKind } from './helpers/references.js';
export { webhookEventKey } from './helpers/webhook-key.js';
export {
  type MemoryWebhookStoreOptions,
  memoryWebhookStore,
  type WebhookClaim,
  type WebhookStore,
  type WebhookTransaction,
} from './helpers/webhook-store.js';
export * from './helpers/webhooks.js';
export type { Modifications } from './resources/modifications.js';
export type { Pos } from './resources/pos.js';
export type { Sessions } from './resources/sessions.js';
export type { Terminals } from './resources/terminals.js';
export type {
  ConfirmedPosPayment,
  ConfirmedRefund,
  ConfirmedSessionPayment,
  ConfirmedWebhook,
  ConfirmWebhookOptions,
  WebhookSources,
  Webhooks,
} from './resources/webhooks.js';
export {
  type Amount,
  type AmountParams,
  CURRENCIES,
  type Currency,
  isCurrency,
  type ListMeta,
  type ModificationAmountParams,
  type OpenEnum,
} from './schemas/common.js';
export {
  type CancelAcknowledgement,
  type CancelParams,
  type CaptureAcknowledgement,
  type CaptureParams,
  type ExtendAcknowledgement,
  type ExtendParams,
  type ListModificationsParams,
  MODIFICATION_STATUSES,
  MODIFICATION_TYPES,
  type ModificationRecord,
  type ModificationStatus,
  type ModificationType,
  type RefundAcknowledgement,
  type RefundParams,
} from './schemas/modifications.js';
export {
  type CreatePosPaymentParams,
  type ListPosPaymentsParams,
  POS_PAYMENT_STATUSES,
  type PosPayment,
  type PosPaymentStatus,
} from './schemas/pos.js';
export type { RedirectData } from './schemas/redirect.js';
export {
  ATTEMPT_STATUSES,
  type CreateSessionParams,
  type ListSessionsParams,
  PAYMENT_STATUSES,
  type PaymentSession,
  SESSION_STATUSES,
  type Session,
  type SessionAttempt,
  type SessionListItem,
  type SessionStatus,
} from './schemas/sessions.js';
export { type ListTerminalsParams, TERMINAL_STATUSES, type Terminal, type TerminalStatus } from './schemas/terminals.js';
export { VERSION } from './version.js';
