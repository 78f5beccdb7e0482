package dev.mailbox.samples.deadletters;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;
import dev.mailbox.api.SerializationException;
import java.util.List;

/** Moves dead letters back to the mailbox they came from, once whatever made them fail is fixed. */
public final class Redrive {

    private Redrive() {
    }

    /**
     * Moves up to {@code max} messages, body and attributes, from {@code deadLetters} to {@code source}. A
     * message whose body cannot be decoded stays where it is, for a person to look at.
     *
     * @return how many it moved
     */
    public static <T> int redrive(Mailbox<T> deadLetters, Mailbox<T> source, int max) {
        int moved = 0;
        while (moved < max) {
            List<Message<T>> batch = deadLetters.receive(ReceiveOptions.defaults().withMaxMessages(Math.min(10, max - moved)));
            if (batch.isEmpty()) {
                return moved;
            }
            for (Message<T> m : batch) {
                try {
                    source.send(m.body(), SendOptions.defaults().withAttributes(m.attributes()));
                } catch (SerializationException undecodable) {
                    continue; // visible again in the dead-letter mailbox when its visibility timeout ends
                }
                m.acknowledge(); // after the send: a crash in between sends it twice, never loses it
                moved++;
            }
        }
        return moved;
    }
}
