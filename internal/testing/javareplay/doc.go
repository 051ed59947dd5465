// Package javareplay replays, command for command, the Java lock that the legacy
// package must interoperate with: the "seed" SETNX + GET + GETSET timestamp
// lock (SETNX, then GET and GETSET once the stored expiry is below the
// caller's clock; DEL on release while its own clock is below its expiry),
// as the Spring RedisCallback copies write it. Tests, compat_test.go and the
// CLI demo use it to stand in for a Java service; it is deliberately
// faithful, flaws included.
//
// The Java it replays (key and value through getBytes(): raw bytes, ASCII
// decimal milliseconds, +1, no TTL):
//
//	public boolean lock() {
//	    long now = System.currentTimeMillis();
//	    long expireAt = now + leaseMillis + 1;
//	    byte[] value = String.valueOf(expireAt).getBytes();
//	    if (conn.setNX(key.getBytes(), value)) {          // SETNX key value
//	        lockExpireAt = expireAt;
//	        return true;
//	    }
//	    byte[] current = conn.get(key.getBytes());        // GET key
//	    if (current != null && Long.parseLong(new String(current)) < now) {
//	        byte[] old = conn.getSet(key.getBytes(), value); // GETSET key value
//	        boolean ok = null == old ? false : Long.parseLong(new String(old)) < now;
//	        if (ok) lockExpireAt = expireAt;
//	        return ok;
//	    }
//	    return false;
//	}
//
//	public void unlock() {
//	    if (System.currentTimeMillis() < lockExpireAt) {
//	        conn.del(key.getBytes());                     // DEL key
//	    }
//	}
//
// Its known flaws, replayed as they are: a nil GETSET reply (the key
// vanished between GET and GETSET) returns false although the GETSET just
// wrote our value — a phantom lock nobody holds, until it expires; a losing
// contender's GETSET overwrites the winner's value with its own; expiry is
// judged by each client's clock; Long.parseLong throws on a value it cannot
// parse (replayed as a *NumberFormatError).
package javareplay
