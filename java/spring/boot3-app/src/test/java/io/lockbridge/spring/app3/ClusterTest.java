package io.lockbridge.spring.app3;

import io.lockbridge.spring.testing.AbstractClusterTest;
import org.springframework.boot.test.context.SpringBootTest;

/** The starter on spring.data.redis.cluster.nodes, on Boot 3.5 ({@link AbstractClusterTest}). */
@SpringBootTest(properties = {"lockbridge.mode=modern", "lockbridge.modern.fencing=true"})
class ClusterTest extends AbstractClusterTest {}
