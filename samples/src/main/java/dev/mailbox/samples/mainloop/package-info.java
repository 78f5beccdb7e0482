/** Request/response with MainLoop (docs/tutorials/request-response-with-mainloop.md). */
@NullMarked
package dev.mailbox.samples.mainloop;

import org.jspecify.annotations.NullMarked;
