package io.lockbridge.spring.app3;

import java.util.Map;

import io.lockbridge.spring.testing.AbstractStarterTest;
import io.lockbridge.spring.testing.StarterScenarios;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthEndpoint;
import org.springframework.boot.actuate.info.InfoEndpoint;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * The Boot 3.5 application follows the phase and shows it ({@link
 * AbstractStarterTest}), read through Boot 3.5's Actuator.
 */
@SpringBootTest(properties = "management.info.defaults.enabled=false")
@AutoConfigureObservability(tracing = false)
class StarterTest extends AbstractStarterTest {
    @Autowired
    HealthEndpoint health;
    @Autowired
    InfoEndpoint info;

    @Override
    protected StarterScenarios.Health health() {
        Health shown = (Health) health.healthForPath("lockbridge");
        return StarterScenarios.Health.of(shown.getStatus().getCode(), shown.getDetails());
    }

    @Override
    protected Map<String, Object> info() {
        return info.info();
    }
}
