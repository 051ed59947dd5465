package io.lockbridge.spring.app4;

import java.util.Map;

import io.lockbridge.spring.testing.AbstractStarterTest;
import io.lockbridge.spring.testing.StarterScenarios;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.actuate.info.InfoEndpoint;
import org.springframework.boot.health.actuate.endpoint.HealthEndpoint;
import org.springframework.boot.health.actuate.endpoint.IndicatedHealthDescriptor;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * The Boot 4.0 application follows the phase and shows it ({@link
 * AbstractStarterTest}), read through Boot 4.0's Actuator.
 */
@SpringBootTest(properties = "management.info.defaults.enabled=false")
class StarterTest extends AbstractStarterTest {
    @Autowired
    HealthEndpoint health;
    @Autowired
    InfoEndpoint info;

    @Override
    protected StarterScenarios.Health health() {
        IndicatedHealthDescriptor shown = (IndicatedHealthDescriptor) health.healthForPath("lockbridge");
        return StarterScenarios.Health.of(shown.getStatus().getCode(), shown.getDetails());
    }

    @Override
    protected Map<String, Object> info() {
        return info.info();
    }
}
