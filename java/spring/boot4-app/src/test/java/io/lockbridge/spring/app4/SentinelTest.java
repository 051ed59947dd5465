package io.lockbridge.spring.app4;

import io.lockbridge.spring.testing.AbstractSentinelTest;
import org.springframework.boot.test.context.SpringBootTest;

/** The starter on spring.data.redis.sentinel.*, on Boot 4.0 ({@link AbstractSentinelTest}). */
@SpringBootTest(properties = {"lockbridge.mode=modern", "lockbridge.modern.fencing=true"})
class SentinelTest extends AbstractSentinelTest {}
