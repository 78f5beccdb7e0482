package dev.mailbox.sqsendpoint.internal;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxException;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.sqsendpoint.QueueRecord;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Message move tasks (StartMessageMoveTask, ListMessageMoveTasks, CancelMessageMoveTask): a redrive of the messages
 * of a dead-letter queue back to the queues they came from (each message's DeadLetterQueueSourceArn) or to a named
 * queue, at most so many messages a second. A task moves the messages the queue held when it started (its count
 * then), receiving them as the principal who started it, copying each to its destination
 * ({@link Messages#forward}) and only then deleting it, so a message is never lost (if the endpoint stops between the
 * two, it is in both). Messages in flight when the task meets them are left where they are.
 *
 * <p>Tasks run on this endpoint: one at a time per queue, at most {@value #MAX_RUNNING} at once, and the last
 * {@value #KEPT} of each queue are listed; an endpoint's tasks are not seen by another node's endpoint, and end when
 * it closes (a task cancelled that way is CANCELLED). What a task did stays done.
 */
final class MoveTasks implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(MoveTasks.class);
    static final int MAX_RUNNING = 16;
    static final int KEPT = 10;
    static final int MAX_RATE = 500;
    /** How fast a task without a rate moves: SQS's largest. */
    static final int DEFAULT_RATE = MAX_RATE;

    enum Status { RUNNING, COMPLETED, CANCELLING, CANCELLED, FAILED }

    /** One task. */
    final class Task implements Runnable {
        final String handle;
        final String source;
        final @Nullable String destination;
        final @Nullable Integer rate;
        final String principal;
        final long startedAtMillis;
        final long toMove;
        final AtomicLong moved = new AtomicLong();
        volatile Status status = Status.RUNNING;
        volatile @Nullable String failure;
        volatile @Nullable Future<?> future;

        Task(String handle, String source, @Nullable String destination, @Nullable Integer rate, String principal,
             long toMove) {
            this.handle = handle;
            this.source = source;
            this.destination = destination;
            this.rate = rate;
            this.principal = principal;
            this.startedAtMillis = context.clock.millis();
            this.toMove = toMove;
        }

        @Override
        public void run() {
            try {
                move();
                finish(status == Status.CANCELLING ? Status.CANCELLED : Status.COMPLETED, null);
            } catch (InterruptedException e) {
                finish(Status.CANCELLED, null);
            } catch (RuntimeException e) {
                LOG.warn("message move task {} from queue '{}' failed", handle, source, e);
                finish(Status.FAILED, e instanceof SqsError || e instanceof MailboxException
                        ? e.getMessage() : "InternalError");
            } finally {
                running.decrementAndGet();
            }
        }

        private void finish(Status end, @Nullable String reason) {
            failure = reason;
            status = end;
        }

        private void move() throws InterruptedException {
            Mailbox<byte[]> from = context.mailbox(source, principal);
            int perSecond = rate != null ? rate : DEFAULT_RATE;
            long started = System.nanoTime();
            while (status == Status.RUNNING && moved.get() < toMove) {
                int want = (int) Math.min(10, Math.min(toMove - moved.get(), perSecond));
                List<Message<byte[]>> got = from.receive(ReceiveOptions.defaults().withMaxMessages(want)
                        .withVisibilityTimeout(Duration.ofSeconds(30)));
                if (got.isEmpty()) {
                    return; // nothing visible is left: the rest is in flight or gone
                }
                for (Message<byte[]> m : got) {
                    if (status != Status.RUNNING) {
                        from.nack(m.receiptHandle(), Duration.ZERO);
                        continue;
                    }
                    String target = destination != null ? destination : sourceOf(m);
                    QueueRecord targetRecord = context.directory.get(target).orElseThrow(() -> new SqsError(
                            ErrorCode.RESOURCE_NOT_FOUND, "The destination queue " + target + " does not exist."));
                    messages.forward(target, targetRecord, principal, m,
                            java.util.Collections.singletonMap(Outgoing.DEAD_LETTER_SOURCE, null));
                    from.acknowledge(m.receiptHandle());
                    long done = moved.incrementAndGet();
                    // at most perSecond a second since the start: wait for the time the next one is due
                    long dueNanos = started + done * 1_000_000_000L / perSecond;
                    long waitNanos = dueNanos - System.nanoTime();
                    if (waitNanos > 0) {
                        Thread.sleep(waitNanos / 1_000_000L, (int) (waitNanos % 1_000_000L));
                    }
                }
            }
        }

        /** @return the queue a dead letter came from, by its DeadLetterQueueSourceArn */
        private String sourceOf(Message<byte[]> m) {
            String arn = m.systemAttributes().get(Outgoing.DEAD_LETTER_SOURCE);
            String queue = arn == null ? null : context.arns.queueName(arn);
            if (queue == null) {
                throw new SqsError(ErrorCode.INVALID_PARAMETER_VALUE, "Message " + m.id() + " has no"
                        + " DeadLetterQueueSourceArn: give the task a DestinationArn.");
            }
            return queue;
        }

        ObjectNode describe() {
            ObjectNode out = context.json.createObjectNode();
            Status s = status;
            if (s == Status.RUNNING) {
                out.put("TaskHandle", handle);
            }
            out.put("Status", s.name()).put("SourceArn", context.arns.arn(source));
            if (destination != null) {
                out.put("DestinationArn", context.arns.arn(destination));
            }
            if (rate != null) {
                out.put("MaxNumberOfMessagesPerSecond", rate);
            }
            out.put("ApproximateNumberOfMessagesMoved", moved.get())
                    .put("ApproximateNumberOfMessagesToMove", toMove);
            if (s == Status.FAILED && failure != null) {
                out.put("FailureReason", failure);
            }
            out.put("StartedTimestamp", startedAtMillis);
            return out;
        }
    }

    private final Context context;
    private final Messages messages;
    private final Map<String, Deque<Task>> bySource = new HashMap<>();
    private final Map<String, Task> byHandle = new HashMap<>();
    private final AtomicInteger running = new AtomicInteger();
    private final ExecutorService pool;

    MoveTasks(Context context, Messages messages) {
        this.context = context;
        this.messages = messages;
        AtomicInteger n = new AtomicInteger();
        this.pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "sqs-endpoint-move-task-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Starts a task.
     *
     * @return its handle
     * @throws SqsError if a task of the source is running, or {@value #MAX_RUNNING} tasks are
     */
    synchronized String start(String source, @Nullable String destination, @Nullable Integer rate, String principal,
                              long toMove) {
        Deque<Task> tasks = bySource.computeIfAbsent(source, s -> new ArrayDeque<>());
        for (Task t : tasks) {
            if (t.status == Status.RUNNING || t.status == Status.CANCELLING) {
                // StartMessageMoveTask's errors (SQS API reference) name UnsupportedOperation, not InvalidParameterValue
                throw new SqsError(ErrorCode.UNSUPPORTED_OPERATION, "There is already a task running. Only one active"
                        + " task is allowed for a source queue arn at a given time.");
            }
        }
        if (running.get() >= MAX_RUNNING) {
            throw new SqsError(ErrorCode.OVER_LIMIT, "This endpoint runs at most " + MAX_RUNNING
                    + " message move tasks at once.");
        }
        String handle = Base64.getUrlEncoder().withoutPadding().encodeToString((UUID.randomUUID() + ":"
                + context.arns.arn(source)).getBytes(StandardCharsets.UTF_8));
        Task task = new Task(handle, source, destination, rate, principal, toMove);
        running.incrementAndGet();
        try {
            task.future = pool.submit(task);
        } catch (RejectedExecutionException closed) {
            running.decrementAndGet();
            throw new SqsError(ErrorCode.SERVICE_UNAVAILABLE, "The endpoint is closing.");
        }
        tasks.addFirst(task);
        byHandle.put(handle, task);
        while (tasks.size() > KEPT) {
            Task old = tasks.removeLast();
            byHandle.remove(old.handle);
        }
        return handle;
    }

    /** @return the most recent tasks of a queue, newest first */
    synchronized List<ObjectNode> list(String source, int max) {
        List<ObjectNode> out = new ArrayList<>();
        for (Task t : bySource.getOrDefault(source, new ArrayDeque<>())) {
            if (out.size() == max) {
                break;
            }
            out.add(t.describe());
        }
        return out;
    }

    /** @return the task of a handle, or null */
    synchronized @Nullable Task find(String handle) {
        return byHandle.get(handle);
    }

    /**
     * Cancels a running task: it stops before its next message.
     *
     * @return how many messages it had moved
     * @throws SqsError ResourceNotFoundException for an unknown handle; UnsupportedOperation if it is not running
     */
    long cancel(String handle) {
        Task t = find(handle);
        if (t == null) {
            throw new SqsError(ErrorCode.RESOURCE_NOT_FOUND, "The resource that you specified for the TaskHandle"
                    + " parameter doesn't exist.");
        }
        synchronized (this) {
            if (t.status != Status.RUNNING) {
                throw new SqsError(ErrorCode.UNSUPPORTED_OPERATION, "Only a task whose status is RUNNING can be"
                        + " cancelled; this one is " + t.status + ".");
            }
            t.status = Status.CANCELLING;
        }
        return t.moved.get();
    }

    /** Forgets a deleted queue's tasks (a running one stops). */
    synchronized void forget(String queue) {
        Deque<Task> tasks = bySource.remove(queue);
        if (tasks != null) {
            for (Task t : tasks) {
                byHandle.remove(t.handle);
                if (t.status == Status.RUNNING) {
                    t.status = Status.CANCELLING;
                }
            }
        }
    }

    @Override
    public void close() {
        pool.shutdownNow();
    }
}
