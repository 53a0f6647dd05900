// API failures worded for the user (popup and badge title).

import {
  ApiClientError,
  ApiError,
  ApiNetworkError,
  ApiResponseError,
  RequestTooLargeError,
  UpgradeRequiredError,
} from "./api-client";

export function describeFailure(error: unknown): string {
  if (error instanceof ApiNetworkError) return "the Errata server cannot be reached";
  if (error instanceof RequestTooLargeError) return "this post is too large to send";
  if (error instanceof UpgradeRequiredError) return "this extension version is too old for the server; please update it";
  if (error instanceof ApiError) {
    if (error.codeName === "UNAUTHORIZED") {
      return "the server needs an instance API key or your OpenAI key to investigate (see Settings)";
    }
    if (error.codeName === "TOO_MANY_REQUESTS") return "the server is busy; try again in a minute";
    return `the server refused the request (${error.codeName})`;
  }
  if (error instanceof ApiResponseError) return "the server's answer was not understood";
  if (error instanceof ApiClientError) return error.message;
  return "unexpected error";
}

/** Whether a failed call is not worth repeating (the server refused it for good), as opposed to a network failure, 5xx, 408 or 429. */
export function isPermanentFailure(error: unknown): boolean {
  if (error instanceof ApiError) return error.httpStatus < 500 && error.httpStatus !== 429 && error.httpStatus !== 408;
  return error instanceof ApiResponseError && error.httpStatus < 500;
}
