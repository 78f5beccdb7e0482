/**
 * One place per setting: a {@link dev.mailbox.coordination.settings.Setting} holds a server setting's config key,
 * flag, help, default and accepted values, and {@link dev.mailbox.coordination.settings.Settings} holds the values
 * a builder, a command line or a config file gave. The registries of the settings themselves live next to the
 * builders that read them ({@code CoordinatorKeys}, {@code NodeKeys}, {@code SecurityKeys}). This package depends
 * on nothing but the JDK, so that both servers can share it. Types in this package are non-null unless annotated
 * otherwise.
 */
@NullMarked
package dev.mailbox.coordination.settings;

import org.jspecify.annotations.NullMarked;
