package io.numaspark.affinity;

/** A native affinity call failed; the message says why and what to check. */
public final class AffinityException extends RuntimeException {
  public AffinityException(String message) {
    super(message);
  }

  public AffinityException(String message, Throwable cause) {
    super(message, cause);
  }
}
