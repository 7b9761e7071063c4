"""Templating is opt-in: plain skills render byte for byte, whatever template syntax they quote."""

from __future__ import annotations

from pathlib import Path

import pytest
from local_tools import RecordingTool

from toolsift import SkillParseError, SkillRenderError
from toolsift.agent import Conversation
from toolsift.registry import ToolRegistry
from toolsift.skills import Skill, SkillsLoader, bind_arguments
from toolsift.skills._internal import parse_skill_text

# Text from real skills that only looks like a Jinja template.
KINDS = {
    "github-actions": """\
```yaml
- run: docker build -t app:${{ github.sha }} .
  if: ${{ github.event_name == 'push' && !contains(github.ref, 'tags') }}
```""",
    "go-template": 'Hello {{ .Name }}{{ if .Admin }} (admin){{ end }}; {{ printf "%d" .Count }}',
    "helm": """\
image: {{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
labels:
  {{- include "chart.labels" . | nindent 4 }}
{{- range .Values.hosts }}
  - {{ . | quote }}
{{- end }}""",
    "handlebars": "<ul>{{#each items}}<li>{{this.name}}</li>{{else}}none{{/each}}</ul>{{> footer}}",
    "vue": "<p v-if=\"seen\">{{ message.split('').reverse().join('') }}</p><span>{{ count + 1 }}</span>",
    "docker-format": (
        "docker ps --format '{{.Names}}\\t{{.Status}}'\n"
        "docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' web"
    ),
    "jinja-in-fence": """\
```jinja
{% extends "base.html" %}
{# a comment #}
{% for user in users %}<li>{{ user.name | title }}</li>{% endfor %}
```""",
    "liquid-jekyll": (
        "{% raw %}{{ page.title }}{% endraw %} and {% include footer.html %} at {{ site.url | relative_url }}"
    ),
    "mustache": "{{! a comment }}{{{unescaped}}}{{^items}}No items.{{/items}}{{=<% %>=}}",
    "angular": "<li *ngFor=\"let item of items\">{{ item.birthday | date:'longDate' }}</li>",
    "ansible": "when: \"{{ ansible_facts['os_family'] }}\" == 'Debian'",
    "unbalanced": "Start a Jinja comment with {# and a tag with {% or {{, and close none of them.",
}


def write(root: Path, name: str, front: str, body: str) -> Path:
    path = root / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: A skill.\n{front}---\n{body}\n", encoding="utf-8")
    return path


class OneSkill:
    """A skill source holding one skill."""

    def __init__(self, skill: Skill) -> None:
        self.skill = skill

    def get(self, name: str) -> Skill:
        return self.skill

    def invocable(self) -> list[Skill]:
        return [self.skill]


@pytest.mark.parametrize("kind", sorted(KINDS))
async def test_plain_skill_quoting_template_syntax_loads_and_renders_byte_for_byte(tmp_path: Path, kind: str) -> None:
    body = f"# {kind}\n\n{KINDS[kind]}\n\nUse $ARGUMENTS as you see fit."
    write(tmp_path, kind, "allowed-tools: read_file\n", body)
    write(tmp_path, "neighbour", "variables: [topic]\n", "About {{ topic }}.")
    skills = await SkillsLoader(project=tmp_path).aload()
    assert skills.problems == ()
    skill = skills.get(kind)
    assert not skill.templated and skill.templating == "none" and skill.body == body
    assert await skill.render() == body
    assert await skill.render(bind_arguments(skill, "")) == body
    assert await skills.get("neighbour").render({"topic": "auth"}) == "About auth."


async def test_plain_skill_gets_the_argument_text_on_an_arguments_line_after_the_body() -> None:
    skill = parse_skill_text("---\nname: s\ndescription: S.\n---\nFix issue $ARGUMENTS with {{ care }}.\n")
    assert await skill.render(bind_arguments(skill, "  #42 in auth ")) == (
        "Fix issue $ARGUMENTS with {{ care }}.\n\nARGUMENTS: #42 in auth"
    )
    assert await Skill(name="s", description="S.").render({"arguments": "go"}) == "ARGUMENTS: go"


async def test_use_of_a_plain_skill_passes_the_text_to_the_model() -> None:
    skill = parse_skill_text("---\nname: s\ndescription: S.\n---\nDeploy with `${{ github.sha }}`.\n")
    registry = ToolRegistry()
    registry.register(RecordingTool("read_file"))
    conversation = Conversation(registry, OneSkill(skill))
    reply = await conversation.handle_command("/use s the staging cluster")
    assert reply is not None and reply.ok
    assert conversation.instructions_now() == (
        "# Skill: s\n\nDeploy with `${{ github.sha }}`.\n\nARGUMENTS: the staging cluster"
    )


async def test_plain_skill_refuses_variables_it_does_not_declare() -> None:
    with pytest.raises(SkillRenderError, match=r"unknown variable\(s\) 'topic'; declared: none"):
        await Skill(name="s", description="S.", body="{{ topic }}").render({"topic": "x"})


async def test_templating_jinja_without_variables_renders_the_arguments() -> None:
    text = "---\nname: s\ndescription: S.\ntemplating: jinja\n---\nRemember {{ arguments or 'everything' }}.\n"
    skill = parse_skill_text(text)
    assert skill.templated and skill.variables == {}
    assert await skill.render(bind_arguments(skill, "the deadline")) == "Remember the deadline."
    assert await skill.render() == "Remember everything."


@pytest.mark.parametrize(
    ("front", "templating"),
    [
        ("", "none"),
        ("variables: [topic]\n", "jinja"),
        ("templating: jinja\n", "jinja"),
        ("templating: none\n", "none"),
        ("templating:\nvariables: [topic]\n", "jinja"),
    ],
)
def test_templating_defaults_to_jinja_exactly_when_variables_are_declared(front: str, templating: str) -> None:
    skill = parse_skill_text(f"---\nname: s\ndescription: S.\n{front}---\nBody.\n")
    assert skill.templating == templating and skill.templated is (templating == "jinja")


async def test_templated_skill_keeps_raw_blocks_as_written_and_fills_the_rest() -> None:
    fence = "```yaml\nimage: {{ .Values.image }}\nrun: echo ${{ github.sha }}\n```"
    body = f"Chart {{{{ chart }}}}:\n{{% raw %}}\n{fence}\n{{% endraw %}}"
    skill = parse_skill_text(f"---\nname: s\ndescription: S.\nvariables: [chart]\n---\n{body}\n")
    assert await skill.render({"chart": "web"}) == f"Chart web:\n\n{fence}\n"


def test_templated_skill_quoting_template_syntax_is_refused_with_the_fix() -> None:
    text = "---\nname: s\ndescription: S.\nvariables: [chart]\n---\nChart {{ chart }}\n\nTag ${{ github.sha }}\n"
    with pytest.raises(
        SkillParseError,
        match=r"<s>:8: template error in the body: the body uses 'github', which is not declared under 'variables' "
        r"\(declared: chart; 'arguments' is always available\); if that text is meant literally, wrap it in "
        r"\{% raw %\}\.\.\.\{% endraw %\}",
    ):
        parse_skill_text(text, "<s>")


def test_templating_none_with_variables_is_refused() -> None:
    text = "---\nname: s\ndescription: S.\nvariables: [topic]\ntemplating: none\n---\n{{ topic }}\n"
    with pytest.raises(
        SkillParseError,
        match=r"<s>:5: field 'templating': a skill with 'variables' has a templated body; remove 'templating: none' "
        r"or the variables",
    ) as caught:
        parse_skill_text(text, "<s>")
    assert caught.value.field == "templating"


def test_templating_with_an_unknown_engine_is_refused() -> None:
    with pytest.raises(
        SkillParseError,
        match=r"<s>:4: field 'templating': Input should be 'jinja' or 'none'; got "
        r"'handlebars'",
    ):
        parse_skill_text("---\nname: s\ndescription: S.\ntemplating: handlebars\n---\nBody.\n", "<s>")
