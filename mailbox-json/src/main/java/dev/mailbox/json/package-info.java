/**
 * {@link dev.mailbox.json.JsonCodec}: message bodies as JSON through Jackson, kept out of
 * {@code mailbox-api} so that the API needs no serialization library. Types in this package are non-null
 * unless annotated otherwise.
 */
@NullMarked
package dev.mailbox.json;

import org.jspecify.annotations.NullMarked;
