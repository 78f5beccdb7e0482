/**
 * Support for backend implementers, so every backend encodes, checks and decodes bodies the same
 * way. Application code does not need this package.
 */
@NullMarked
package dev.mailbox.api.spi;

import org.jspecify.annotations.NullMarked;
