package dev.mailbox.coordination.server.internal;

import dev.mailbox.coordination.internal.Tls;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import org.jspecify.annotations.Nullable;

/**
 * Who is calling: the principal of a verified client certificate, else the owner of a bearer token. With
 * an access policy, a call that proves neither is refused {@code UNAUTHENTICATED} (and audited) before
 * any service code runs; without one, every call runs as {@link #ANONYMOUS}.
 */
public final class Caller implements ServerInterceptor {

    /** The principal of the call being served. */
    public static final Context.Key<String> PRINCIPAL = Context.key("mailbox-principal");
    /** The principal when security is off. */
    public static final String ANONYMOUS = "anonymous";

    private final @Nullable AccessPolicy policy;

    /** @param policy the access policy, or null when security is off */
    public Caller(@Nullable AccessPolicy policy) {
        this.policy = policy;
    }

    /** @return the principal of the call being served */
    public static String current() {
        String p = PRINCIPAL.get();
        return p == null ? ANONYMOUS : p;
    }

    @Override
    public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
                                                       ServerCallHandler<Q, A> next) {
        if (policy == null) {
            return Contexts.interceptCall(Context.current().withValue(PRINCIPAL, ANONYMOUS), call, headers, next);
        }
        String principal = certificatePrincipal(call);
        if (principal == null) {
            String auth = headers.get(Tls.AUTHORIZATION);
            if (auth != null && auth.regionMatches(true, 0, "Bearer ", 0, 7)) {
                principal = policy.principalOfToken(auth.substring(7).trim());
            }
            if (principal == null) {
                String method = call.getMethodDescriptor().getBareMethodName();
                Audit.refused("?", method, "-", auth == null ? "no token or client certificate" : "unknown token");
                call.close(Status.UNAUTHENTICATED.withDescription(auth == null
                        ? "this server requires a client certificate or a bearer token"
                        : "the bearer token is not one this server knows"), new Metadata());
                return new ServerCall.Listener<>() {
                };
            }
        }
        return Contexts.interceptCall(Context.current().withValue(PRINCIPAL, principal), call, headers, next);
    }

    private static @Nullable String certificatePrincipal(ServerCall<?, ?> call) {
        SSLSession session = call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION);
        if (session == null) {
            return null;
        }
        try {
            Certificate[] chain = session.getPeerCertificates();
            return chain.length > 0 && chain[0] instanceof X509Certificate c ? Tls.principalOf(c) : null;
        } catch (SSLPeerUnverifiedException e) {
            return null; // TLS without a client certificate: a token may still say who it is
        }
    }
}
