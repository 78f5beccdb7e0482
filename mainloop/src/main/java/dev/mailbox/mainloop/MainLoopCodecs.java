package dev.mailbox.mainloop;

import com.fasterxml.jackson.databind.type.TypeFactory;
import dev.mailbox.api.Codec;
import dev.mailbox.json.JsonCodec;

/**
 * JSON codecs for the MainLoop envelopes around a caller's own types, for building the mailboxes a
 * {@link MainLoop} and a {@link MainLoopClient} use.
 */
public final class MainLoopCodecs {

    private MainLoopCodecs() {
    }

    /**
     * @param body  the request body class
     * @param <Req> the request body type
     * @return a JSON codec for requests with that body
     */
    public static <Req> Codec<MainLoopRequest<Req>> requests(Class<Req> body) {
        return JsonCodec.of(TypeFactory.defaultInstance().constructParametricType(MainLoopRequest.class, body));
    }

    /**
     * @param response the response class
     * @param <Res>    the response type
     * @return a JSON codec for results with that response
     */
    public static <Res> Codec<MainLoopResult<Res>> results(Class<Res> response) {
        return JsonCodec.of(TypeFactory.defaultInstance().constructParametricType(MainLoopResult.class, response));
    }

    /**
     * @param body  the request body class
     * @param <Req> the request body type
     * @return a JSON codec for dead letters of requests with that body
     */
    public static <Req> Codec<DeadLetter<Req>> deadLetters(Class<Req> body) {
        return JsonCodec.of(TypeFactory.defaultInstance().constructParametricType(DeadLetter.class, body));
    }
}
