/**
 * A parsed JSON answer as a test sees it. Its shape is what the test's
 * assertions check, at run time; typing every body would only move the same
 * checks into casts.
 */
// biome-ignore lint/suspicious/noExplicitAny: the one door through which untyped JSON enters the tests
export type Json = any;
