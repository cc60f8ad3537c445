// The one public error shape. Operations throw AppError; the HTTP layer turns it
// into problem+json (API) or messages next to inputs (pages). A raw cause is
// logged, never sent.

export type FieldErrors = Record<string, string[]>;

const TITLES: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthenticated',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  409: 'Conflict',
  412: 'Precondition failed',
  413: 'Payload too large',
  414: 'URI too long',
  415: 'Unsupported media type',
  422: 'Validation failed',
  429: 'Too many requests',
  500: 'Internal server error',
  503: 'Service unavailable',
};

export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly errors?: FieldErrors,
  ) {
    super(detail);
    this.name = 'AppError';
  }
}

export function validationFailed(errors: FieldErrors, detail = 'The request has invalid fields.'): AppError {
  return new AppError(422, 'validation_failed', detail, errors);
}

export function notFound(what = 'The record does not exist.'): AppError {
  return new AppError(404, 'not_found', what);
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  errors?: FieldErrors;
}

export function toProblem(error: AppError): Problem {
  return {
    type: `urn:leadbook:problem:${error.code}`,
    title: TITLES[error.status] ?? 'Error',
    status: error.status,
    detail: error.detail,
    code: error.code,
    ...(error.errors ? { errors: error.errors } : {}),
  };
}

/** Collects field messages so every bad field of a request is reported at once. */
export class FieldErrorBag {
  // Field names come from clients: a prototype-less map keeps `__proto__` or
  // `constructor` an ordinary key instead of a member of Object.prototype.
  readonly errors: FieldErrors = Object.create(null);
  add(field: string, message: string): void {
    this.errors[field] ??= [];
    this.errors[field].push(message);
  }
  get empty(): boolean {
    return Object.keys(this.errors).length === 0;
  }
  throwIfAny(detail?: string): void {
    if (!this.empty) throw validationFailed(this.errors, detail);
  }
}
