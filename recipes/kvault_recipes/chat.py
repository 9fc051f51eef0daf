"""A conversation as token segments, and answers generated with a Hugging Face model.

A multi-turn trajectory is trained on the model's own tokens only: the feedback
messages between turns are in the sequence but masked out of the loss. The pieces
come from the tokenizer's chat template by prefix difference (the text of the first
k+1 messages minus that of the first k), so any template works whose rendering of a
conversation begins with the rendering of its first messages; one that does not
(e.g. a template that rewrites earlier turns) raises ValueError.

torch is imported inside generate() only.
"""


def _render(tokenizer, messages, generation_prompt):
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=generation_prompt)


def pieces(tokenizer, messages):
    """[(text, from_model)] whose concatenation is the rendered conversation; after a
    user message that ends the conversation or precedes an answer, the generation
    prompt is included in that user message's piece."""
    out, previous = [], ""
    for k, message in enumerate(messages):
        following = messages[k + 1]["role"] if k + 1 < len(messages) else None
        generation_prompt = message["role"] != "assistant" and following in (None, "assistant")
        text = _render(tokenizer, messages[:k + 1], generation_prompt)
        if not text.startswith(previous):
            raise ValueError("the chat template does not render a conversation as an extension of its first "
                             "%d messages; multi-turn segments need one that does" % k)
        out.append((text[len(previous):], message["role"] == "assistant"))
        previous = text
    return out


def token_segments(tokenizer, messages):
    """(prompt_ids, completion_ids, completion_mask) of a conversation: the prompt is
    everything before the first answer; the mask is 1 on the model's tokens, 0 on the
    feedback between turns."""
    prompt, completion, mask = [], [], []
    seen_answer = False
    for text, from_model in pieces(tokenizer, messages):
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        seen_answer = seen_answer or from_model
        if not seen_answer:
            prompt.extend(ids)
        else:
            completion.extend(ids)
            mask.extend([1 if from_model else 0] * len(ids))
    return prompt, completion, mask


def conversation_ids(tokenizer, messages):
    """The token ids a model continues for the next answer (the conversation ends
    with a user message; its piece carries the generation prompt)."""
    return [i for text, _ in pieces(tokenizer, messages) for i in tokenizer(text, add_special_tokens=False)["input_ids"]]


def generate(model, tokenizer, conversations, *, max_new_tokens, temperature=1.0, greedy=False, batch_size=64):
    """The model's answer to each conversation (text, special tokens dropped), sampled
    (or greedy), in batches of batch_size left-padded sequences."""
    import torch
    device = next(model.parameters()).device
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    answers = []
    was_training = model.training
    model.eval()
    try:
        for start in range(0, len(conversations), batch_size):
            batch = [conversation_ids(tokenizer, c) for c in conversations[start:start + batch_size]]
            width = max(len(ids) for ids in batch)
            input_ids = torch.tensor([[pad] * (width - len(ids)) + ids for ids in batch], device=device)
            attention = torch.tensor([[0] * (width - len(ids)) + [1] * len(ids) for ids in batch], device=device)
            options = {"do_sample": False} if greedy else {"do_sample": True, "temperature": temperature,
                                                           "top_k": 0, "top_p": 1.0}
            with torch.no_grad():
                out = model.generate(input_ids=input_ids, attention_mask=attention, max_new_tokens=max_new_tokens,
                                     pad_token_id=pad, eos_token_id=tokenizer.eos_token_id, **options)
            for row in out[:, width:].tolist():
                if tokenizer.eos_token_id in row:
                    row = row[:row.index(tokenizer.eos_token_id)]
                answers.append(tokenizer.decode(row, skip_special_tokens=True))
    finally:
        model.train(was_training)
    return answers
