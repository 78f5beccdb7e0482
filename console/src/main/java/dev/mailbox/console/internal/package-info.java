/** The console's JSON API, static files and bounds. Not API. */
@NullMarked
package dev.mailbox.console.internal;

import org.jspecify.annotations.NullMarked;
