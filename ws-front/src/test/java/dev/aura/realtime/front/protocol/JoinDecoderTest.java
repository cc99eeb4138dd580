package dev.aura.realtime.front.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

/** The join payload's postgres_changes bindings: select, filters as realtime-js writes them, postgres_changes_options. */
class JoinDecoderTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static JoinConfig parse(String config) throws Exception {
        JsonNode payload = JSON.readTree("{\"config\":" + config.replace('\'', '"') + "}");
        return JoinDecoder.decode(payload, 100);
    }

    @Test
    void bindingsDifferingOnlyInSelectGetDifferentIdsAndEchoTheirSelect() throws Exception {
        JoinConfig r = parse("{'postgres_changes':["
                + "{'event':'*','schema':'public','table':'t','filter':'id=eq.1'},"
                + "{'event':'*','schema':'public','table':'t','filter':'id=eq.1','select':['id','title']},"
                + "{'event':'*','schema':'public','table':'t','filter':'id=eq.1','select':['title','id']}]}");
        assertThat(r.bindings()).extracting(JoinConfig.Binding::id).doesNotHaveDuplicates();
        assertThat(r.bindings().get(0).select()).isNull();
        assertThat(r.bindings().get(1).select()).containsExactly("id", "title");
        assertThat(r.bindings().get(1).echo().get("select")).hasSize(2);
        assertThat(r.bindings().get(0).id())
                .as("an id without select is the one it always was")
                .isEqualTo(BindingIds.of("*", "public", "t", "id=eq.1"));
    }

    @Test
    void badSelectsAndFiltersAreRefusedAtTheEdge() {
        assertThatThrownBy(() -> parse("{'postgres_changes':[{'event':'*','table':'t','select':[]}]}"))
                .isInstanceOf(JoinDecoder.Invalid.class);
        assertThatThrownBy(() -> parse("{'postgres_changes':[{'event':'*','table':'t','select':['a','a']}]}"))
                .isInstanceOf(JoinDecoder.Invalid.class);
        assertThatThrownBy(() -> parse("{'postgres_changes':[{'event':'*','table':'t','filter':'a=eq.\\'x'}]}"))
                .isInstanceOf(JoinDecoder.Invalid.class);
    }

    @Test
    void theBuildersFiltersAreAccepted() throws Exception {
        JoinConfig r = parse("{'postgres_changes':[{'event':'*','table':'t',"
                + "'filter':'title=like.%foo%,tag=in.(\\'a,b\\',c),done=not.is.null,t=imatch.^x'}]}");
        assertThat(r.bindings()).hasSize(1);
    }

    @Test
    void postgresChangesOptionsWaitHasADefaultAndACap() throws Exception {
        assertThat(parse("{}").postgresChangesOptions().waitMs()).isZero();
        assertThat(parse("{'postgres_changes_options':{'wait':false,'timeout':5000}}")
                        .postgresChangesOptions()
                        .waitMs())
                .isZero();
        assertThat(parse("{'postgres_changes_options':{'wait':true}}")
                        .postgresChangesOptions()
                        .waitMs())
                .isEqualTo(JoinConfig.DEFAULT_WAIT_MS);
        assertThat(parse("{'postgres_changes_options':{'wait':true,'timeout':3000}}")
                        .postgresChangesOptions()
                        .waitMs())
                .isEqualTo(3000);
        assertThat(parse("{'postgres_changes_options':{'wait':true,'timeout':600000}}")
                        .postgresChangesOptions()
                        .waitMs())
                .isEqualTo(JoinConfig.MAX_WAIT_MS);
    }
}
