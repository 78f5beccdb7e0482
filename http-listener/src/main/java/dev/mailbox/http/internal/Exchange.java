package dev.mailbox.http.internal;

import dev.mailbox.http.HttpHandler;
import dev.mailbox.http.HttpRequest;
import dev.mailbox.http.HttpResponder;
import dev.mailbox.http.HttpResponse;
import java.io.ByteArrayOutputStream;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.IteratingCallback;
import org.eclipse.jetty.util.thread.Scheduler;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One request, from its headers to its answer: admit, check the body's size, take its bytes from the budget and a
 * worker slot, read it (asynchronously, under a deadline), hand it to the handler's worker, write the answer, give
 * everything back. State changes happen under this object's lock, so an answer written early (a refusal, the body
 * deadline) and a body chunk arriving at the same moment cannot both count against the budget.
 *
 * <p>An answer counts against the budget from when it is given until it is written, must be read within the write
 * deadline (else the connection is closed), and is written in slices: the JDK copies a heap buffer it writes to a
 * socket into a temporary direct buffer of the buffer's whole size, and keeps that buffer for the thread, so one
 * 40 MiB answer written in one piece would cost 40 MiB outside the heap for as long as its client does not read.
 */
final class Exchange {

    private static final Logger LOG = LoggerFactory.getLogger(Exchange.class);
    /** The most bytes of an answer handed to the socket in one write. */
    static final int SLICE = 64 * 1024;

    private final JettyListener listener;
    private final Request request;
    private final Response response;
    private final Callback callback;
    private final @Nullable GuardedEndPoint socket;
    private final HttpRequest head;
    private final HttpHandler handler;
    /** Whose bytes the budget counts: the client as per-client limits see it. */
    private final InetAddress client;

    // guarded by this
    private boolean answered;
    private boolean dispatched;
    private boolean holdsSlot;
    private long taken;
    private long received;
    private Scheduler.@Nullable Task bodyDeadline;
    private Scheduler.@Nullable Task writeDeadline;
    /** The bytes of the answer being written, counted against the budget until it is. */
    private long answering;
    private boolean written;
    /** The client went away while the handler worked; {@link #goneActions} have run or run as given. */
    private boolean gone;
    private final List<Runnable> goneActions = new ArrayList<>(1);
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
        this.client = head.client();
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
                if (!listener.budget().tryTake(length, client)) {
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
                        if (!listener.budget().tryTake(n, client)) {
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
        if (socket != null) {
            // from now until the answer nothing reads the socket: the listener looks for the client leaving
            socket.whenGone(this::clientGone);
        }
        HttpResponder responder = new HttpResponder() {
            @Override
            public void respond(HttpResponse response) {
                answer(response);
            }

            @Override
            public void onClientGone(Runnable action) {
                whenClientGone(action);
            }
        };
        try {
            listener.workers().execute(() -> {
                try {
                    handler.handle(full, responder);
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

    /** The client went away while the handler worked: tells those who asked; the listener closes the connection. */
    private void clientGone() {
        List<Runnable> actions;
        synchronized (this) {
            if (answered || gone) {
                return;
            }
            gone = true;
            actions = List.copyOf(goneActions);
            goneActions.clear();
        }
        actions.forEach(this::runGoneAction);
    }

    private void whenClientGone(Runnable action) {
        synchronized (this) {
            if (answered) {
                return;
            }
            if (!gone) {
                goneActions.add(action);
                return;
            }
        }
        runGoneAction(action);
    }

    private void runGoneAction(Runnable action) {
        try {
            action.run();
        } catch (RuntimeException e) {
            LOG.warn("{} listener: the handler of {} failed to stop for a client that went away", listener.name(),
                    head, e);
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
        goneActions.clear();
        if (socket != null) {
            socket.whenGone(null);
        }
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
            byte[] body = r.body().length > 0 && !"HEAD".equals(head.method()) ? r.body() : new byte[0];
            answering = body.length;
            listener.budget().take(answering, client);
            writeDeadline = listener.scheduler().schedule(this::answerTooSlow,
                    listener.limits().writeTimeout().toMillis(), TimeUnit.MILLISECONDS);
            new Writer(body).iterate();
        } catch (RuntimeException e) {
            release();
            fail(e);
        }
    }

    /** Writes an answer's body a slice at a time, then completes the request. */
    private final class Writer extends IteratingCallback {
        private final byte[] body;
        private int offset;
        private boolean last;

        Writer(byte[] body) {
            this.body = body;
        }

        @Override
        protected Action process() {
            if (last) {
                return Action.SUCCEEDED;
            }
            int n = Math.min(SLICE, body.length - offset);
            last = offset + n == body.length;
            ByteBuffer slice = n == 0 ? null : ByteBuffer.wrap(body, offset, n);
            offset += n;
            response.write(last, slice, this);
            return Action.SCHEDULED;
        }

        @Override
        protected void onCompleteSuccess() {
            done();
            callback.succeeded();
        }

        @Override
        protected void onCompleteFailure(Throwable x) {
            done();
            callback.failed(x);
        }
    }

    /** The client has not read the answer within the write deadline: the connection goes, and the answer with it. */
    private void answerTooSlow() {
        synchronized (this) {
            if (written) {
                return;
            }
        }
        long millis = listener.limits().writeTimeout().toMillis();
        LOG.debug("{} listener: closing the connection of {}: its answer was not read within {} ms", listener.name(),
                head, millis);
        request.getConnectionMetaData().getConnection().getEndPoint().close(new TimeoutException("the answer was not"
                + " read within " + millis + " ms"));
    }

    private void done() {
        synchronized (this) {
            written = true;
            if (writeDeadline != null) {
                writeDeadline.cancel();
            }
            release();
        }
        if (socket != null) {
            socket.served();
        }
    }

    /** Gives back the body's and the answer's bytes and, if the handler never ran, the worker slot. */
    private void release() {
        listener.budget().giveBack(taken + answering, client);
        taken = 0;
        answering = 0;
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
