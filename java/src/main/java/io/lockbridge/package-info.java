/**
 * lockbridge for Java: Redis locks that interoperate byte for byte with
 * lockbridge's Go packages and with the Java services' old SETNX/GETSET lock,
 * through every phase of a migration.
 *
 * <ul>
 *   <li>{@link io.lockbridge.Redis} — lockbridge's own connections to one
 *       server, which never replay a command ({@link io.lockbridge.SpringRedis}
 *       builds one from a Spring {@code LettuceConnectionFactory});
 *   <li>{@link io.lockbridge.LegacyLocker} — the old Java lock done safely:
 *       atomic takeover, owner-window release;
 *   <li>{@link io.lockbridge.MigrateLocker} — the migrate lock in the
 *       legacy, dual-write, dual-read and modern phases, following the
 *       namespace's phase and heartbeating into its registry;
 *   <li>{@link io.lockbridge.LegacyProfile} — what the old lock writes (unit,
 *       +1, {@link io.lockbridge.KeyCodec}, {@link io.lockbridge.ValueCodec});
 *   <li>the exceptions, under {@link io.lockbridge.LockbridgeException},
 *       mirror Go's errors.
 * </ul>
 *
 * <p>The Lua scripts are the Go packages' own files, copied into the jar by
 * the build and assembled by {@link io.lockbridge.Scripts}, which checks
 * each SHA1 against the manifest. docs/java.md has the quick start and the
 * runbook; docs/protocol.md every key, value and script on the wire.
 */
package io.lockbridge;
