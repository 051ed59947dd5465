package io.lockbridge.spring.app3;

import java.util.Map;

import io.lockbridge.Fixtures;
import io.lockbridge.Phase;
import io.lockbridge.spring.Locks;
import io.lockbridge.spring.testing.StarterScenarios;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.actuate.health.HealthEndpoint;
import org.springframework.boot.actuate.health.HealthComponent;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.info.InfoEndpoint;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The Boot 3.5 application, configured by application.properties and
 * spring.data.redis.host/port, on a real redis-server: it follows the
 * namespace's phase, and shows it in its health, info and metrics.
 */
@SpringBootTest(properties = "management.info.defaults.enabled=false")
@AutoConfigureObservability(tracing = false)
class StarterTest {
    static Fixtures.Standalone srv;

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry r) throws Exception {
        srv = new Fixtures.Standalone();
        srv.initPhase("reports", Phase.LEGACY);
        r.add("spring.data.redis.host", () -> "127.0.0.1");
        r.add("spring.data.redis.port", srv::port);
        r.add("lockbridge.phase-interval", () -> "200ms");
    }

    @AfterAll
    static void stop() {
        srv.close();
    }

    @Autowired
    Locks locks;
    @Autowired
    MeterRegistry meters;
    @Autowired
    HealthEndpoint health;
    @Autowired
    InfoEndpoint info;
    @Autowired
    Reports reports;

    @Test
    void followsThePhaseAndReportsIt() throws Exception {
        StarterScenarios.followsAndReports(srv, "reports", locks, meters, () -> {
            HealthComponent c = health.healthForPath("lockbridge");
            Health h = (Health) c;
            return new StarterScenarios.Health() {
                @Override
                public String status() {
                    return h.getStatus().getCode();
                }

                @Override
                public Map<String, Object> details() {
                    return h.getDetails();
                }
            };
        }, info::info, () -> reports.build("9"));
    }
}
