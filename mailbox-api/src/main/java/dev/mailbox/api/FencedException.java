package dev.mailbox.api;

/**
 * Thrown by a {@link Mailbox#fenced fenced} view when its epoch is lower than the mailbox's fence: a
 * holder of a later lease of this mailbox has used it since, so this caller no longer owns it. Nothing was
 * changed. Not retryable: the caller must stop serving the mailbox (and acquire its lease again, which
 * gives it a new epoch, if it should serve it).
 */
public class FencedException extends MailboxException {

    private final long epoch;
    private final long fence;

    /**
     * @param mailbox the mailbox's name
     * @param epoch   the refused caller's epoch
     * @param fence   the mailbox's fence: the highest epoch used on it, greater than {@code epoch}
     */
    public FencedException(String mailbox, long epoch, long fence) {
        super("mailbox '" + mailbox + "' is fenced at epoch " + fence + ": a call under epoch " + epoch
                + " is refused (a later holder of the mailbox's lease has used it)");
        this.epoch = epoch;
        this.fence = fence;
    }

    /** @return the refused caller's epoch */
    public long epoch() {
        return epoch;
    }

    /** @return the mailbox's fence when the call was refused */
    public long fence() {
        return fence;
    }
}
