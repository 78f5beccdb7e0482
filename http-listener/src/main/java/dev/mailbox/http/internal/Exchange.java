package dev.mailbox.http.internal;

import dev.mailbox.http.HttpHandler;
import dev.mailbox.http.HttpRequest;
import dev.mailbox.http.HttpResponse;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.Scheduler;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One request, from its headers to its answer: admit, check the body's size, take its bytes from the budget and a
 * worker slot, read it (asynchronously, under a deadline), hand it to the handler's worker, write the answer, give
 * everything back. State changes happen under this object's lock, so an answer written early (a refusal, the body
 * deadline) and a body chunk arriving at the same moment cannot both count against the budget.
 */
final class Exchange {

    private static final Logger LOG = LoggerFactory.getLogger(Exchange.class);

    private final JettyListener listener;
    private final Request request;
    private final Response response;
    private final Callback callback;
    private final @Nullable GuardedEndPoint socket;
    private HttpRequest head;
    private HttpHandler handler;

    // guarded by this
    private boolean answered;
    private boolean dispatched;
    private boolean holdsSlot;
    private long taken;
    private long received;
    private Scheduler.@Nullable Task bodyDeadline;
    private byte @Nullable [] fixed;
    private @Nullable ByteArrayOutputStream growing;

    Exchange(JettyListener listener, Request request, Response response, Callback callback,
             @Nullable GuardedEndPoint socket) {
        this.listener = listener;
        this.request = request;
        this.response = response;
        this.callback = callback;
        this.socket = socket;
        this.head = JettyListener.head(request);
        this.handler = listener.route(head.rawPath());
    }

    void start() {
        // while the handler works (a long poll, say) the connection is quiet: that is not the client's fault. Before
        // (reading the body) and after (writing the answer) an idle connection is closed as usual
        request.addIdleTimeoutListener(timeout -> {
            synchronized (this) {
                return !(dispatched && !answered);
            }
        });
        HttpResponse early;
        try {
            early = handler.admit(head);
        } catch (RuntimeException e) {
            LOG.warn("{} listener: admitting {} failed", listener.name(), head, e);
            early = HttpResponse.text(500, "internal error\n");
        }
        if (early != null) {
            answer(head.hasBody() ? early.closingConnection() : early);
            return;
        }
        long length = head.contentLength();
        int max = listener.limits().maxBodyBytes();
        if (length > max) {
            refuse(HttpHandler.Refusal.TOO_LARGE, "the request body is " + length + " bytes; this server takes at most "
                    + max);
            return;
        }
        synchronized (this) {
            if (!listener.workerSlots().tryAcquire()) {
                refuseLocked(HttpHandler.Refusal.BUSY, "the server is busy (every worker taken and "
                        + listener.limits().workerQueue() + " requests waiting); retry later");
                return;
            }
            holdsSlot = true;
            if (length > 0) {
                if (!listener.budget().tryTake(length)) {
                    refuseLocked(HttpHandler.Refusal.BUSY, "the server is busy (its memory for request bodies is in"
                            + " use); retry later");
                    return;
                }
                taken = length;
            }
            if (length == 0) {
                dispatchLocked(new byte[0]);
                return;
            }
            if (length > 0) {
                fixed = new byte[(int) length];
            } else {
                growing = new ByteArrayOutputStream();
            }
            bodyDeadline = listener.scheduler().schedule(this::bodyTooSlow,
                    listener.limits().bodyTimeout().toMillis(), TimeUnit.MILLISECONDS);
        }
        read();
    }

    /** Reads what has arrived; asks to be called again when more does. */
    private void read() {
        while (true) {
            synchronized (this) {
                if (answered) {
                    return;
                }
            }
            Content.Chunk chunk = request.read();
            if (chunk == null) {
                request.demand(this::read);
                return;
            }
            try {
                if (Content.Chunk.isFailure(chunk)) {
                    Throwable failure = chunk.getFailure();
                    synchronized (this) {
                        if (!answered) {
                            // the client went away, or sent nothing for the idle timeout: nobody to answer
                            answered = true;
                            release();
                            fail(failure == null ? new java.io.EOFException("request body") : failure);
                        }
                    }
                    return;
                }
                synchronized (this) {
                    if (answered) {
                        return;
                    }
                    ByteBuffer bytes = chunk.getByteBuffer();
                    int n = bytes.remaining();
                    int max = listener.limits().maxBodyBytes();
                    if (received + n > max) {
                        refuseLocked(HttpHandler.Refusal.TOO_LARGE, "the request body is more than " + max
                                + " bytes, the most this server takes");
                        return;
                    }
                    if (fixed != null) {
                        bytes.get(fixed, (int) received, n);
                    } else {
                        if (!listener.budget().tryTake(n)) {
                            refuseLocked(HttpHandler.Refusal.BUSY, "the server is busy (its memory for request bodies"
                                    + " is in use); retry later");
                            return;
                        }
                        taken += n;
                        byte[] copy = new byte[n];
                        bytes.get(copy);
                        java.util.Objects.requireNonNull(growing).write(copy, 0, n);
                    }
                    received += n;
                    if (chunk.isLast()) {
                        if (bodyDeadline != null) {
                            bodyDeadline.cancel();
                        }
                        byte[] body = fixed != null ? fixed : java.util.Objects.requireNonNull(growing).toByteArray();
                        fixed = null;
                        growing = null;
                        dispatchLocked(body);
                        return;
                    }
                }
            } finally {
                chunk.release();
            }
        }
    }

    private void bodyTooSlow() {
        synchronized (this) {
            if (!answered && !dispatched) {
                refuseLocked(HttpHandler.Refusal.TOO_SLOW, "the request body did not arrive within "
                        + listener.limits().bodyTimeout().toMillis() + " ms");
            }
        }
    }

    private void dispatchLocked(byte[] body) {
        dispatched = true;
        HttpRequest full = head.withBody(body);
        try {
            listener.workers().execute(() -> {
                try {
                    handler.handle(full, this::answer);
                } catch (RuntimeException | Error e) {
                    LOG.warn("{} listener: handling {} failed", listener.name(), head, e);
                    answer(HttpResponse.text(500, "internal error\n"));
                } finally {
                    synchronized (this) {
                        releaseSlot();
                    }
                }
            });
        } catch (RejectedExecutionException closing) {
            refuseLocked(HttpHandler.Refusal.BUSY, "the server is shutting down");
        }
    }

    private void refuse(HttpHandler.Refusal refusal, String message) {
        synchronized (this) {
            refuseLocked(refusal, message);
        }
    }

    private void refuseLocked(HttpHandler.Refusal refusal, String message) {
        HttpResponse r;
        try {
            r = handler.refusal(head, refusal, message);
        } catch (RuntimeException e) {
            r = HttpResponse.text(refusal.status(), message + "\n");
        }
        answerLocked(r.closingConnection());
    }

    private void answer(HttpResponse r) {
        synchronized (this) {
            answerLocked(r);
        }
    }

    private void answerLocked(HttpResponse r) {
        if (answered) {
            return;
        }
        answered = true;
        if (bodyDeadline != null) {
            bodyDeadline.cancel();
        }
        // an answer before the whole body was read leaves the rest unread: the connection cannot carry another
        boolean unread = head.hasBody() && !dispatched;
        try {
            response.setStatus(r.status());
            var headers = response.getHeaders();
            r.headers().forEach(headers::put);
            if (r.closesConnection() || unread) {
                headers.put(HttpHeader.CONNECTION, "close");
            }
            headers.put(HttpHeader.CONTENT_LENGTH, Long.toString(r.body().length));
            boolean withBody = r.body().length > 0 && !"HEAD".equals(head.method());
            response.write(true, withBody ? ByteBuffer.wrap(r.body()) : null, new Callback() {
                @Override
                public void succeeded() {
                    done();
                    callback.succeeded();
                }

                @Override
                public void failed(Throwable x) {
                    done();
                    callback.failed(x);
                }
            });
        } catch (RuntimeException e) {
            release();
            fail(e);
        }
    }

    private void done() {
        synchronized (this) {
            release();
        }
        if (socket != null) {
            socket.served();
        }
    }

    /** Gives back the body's bytes and, if the handler never ran, the worker slot. */
    private void release() {
        listener.budget().giveBack(taken);
        taken = 0;
        fixed = null;
        growing = null;
        if (!dispatched) {
            releaseSlot();
        }
    }

    private void releaseSlot() {
        if (holdsSlot) {
            holdsSlot = false;
            listener.workerSlots().release();
        }
    }

    private void fail(Throwable failure) {
        try {
            callback.failed(failure);
        } catch (RuntimeException e) {
            LOG.debug("{} listener: failing {}: {}", listener.name(), head, e.toString());
        }
    }
}
