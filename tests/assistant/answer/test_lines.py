"""The mail's lines (answer/lines.py): prose split into sentences, tables, lists, wrapped lines,
and what mail carries besides what it says (banners, quoted headers, disclaimers, signatures)."""

from __future__ import annotations

from assistant.answer.lines import mail_lines, split_sentences

SOAK = """From: Priya Nair | Date: 2026-05-29 | Subject: RC2 soak: 3 of 12 units lost 9% battery
Hi Maya, hi Daan,

Something is wrong with RC2. The 72-hour soak on the 12 units in the
rack finished this afternoon, and all functional checks passed, but when
I plotted the battery trend per unit three of them stand out: S10, S11
and S12 dropped from 100% to 91% in three days. The other nine are flat,
as they should be.

A healthy sensor loses less than 1% per week. At this rate those three
would be empty in about five weeks.

Priya"""


# -- splitting --------------------------------------------------------------------------------


def test_split_joins_wrapped_lines_and_drops_header_greeting_and_sign_off() -> None:
    sentences = split_sentences(SOAK)
    assert sentences[0] == "Something is wrong with RC2."
    assert sentences[1].startswith("The 72-hour soak on the 12 units in the rack finished")
    assert sentences[1].endswith("S10, S11 and S12 dropped from 100% to 91% in three days.")
    assert not any("Subject" in s or s.startswith("Hi Maya") or s == "Priya" for s in sentences)


def test_split_keeps_abbreviations_times_amounts_and_versions_whole() -> None:
    text = (
        "We meet at 9.30 in the lab, e.g. the big one. The invoice is €1.250,00 incl. VAT for "
        "approx. 5 units, see no. 4 in the list. Firmware v3.2 is out. Call H. Mulder today."
    )
    assert split_sentences(text) == [
        "We meet at 9.30 in the lab, e.g. the big one.",
        "The invoice is €1.250,00 incl. VAT for approx. 5 units, see no. 4 in the list.",
        "Firmware v3.2 is out.",
        "Call H. Mulder today.",
    ]


def test_split_strips_quote_markers_and_bullets_and_joins_their_continuations() -> None:
    text = (
        "> When do we ship the boards to the customer?\n"
        "> Lotte\n"
        "\n"
        "Fix proposal:\n"
        "- every exit from an RX state goes through one function,\n"
        "  radio_enter_sleep();\n"
        "- rejoin backs off exponentially: 1 minute, 5 minutes, 30 minutes, then\n"
        "  every 6 hours;\n"
        "* [x] unit tests for every exit path\n"
    )
    assert split_sentences(text) == [
        "When do we ship the boards to the customer?",
        "every exit from an RX state goes through one function, radio_enter_sleep();",
        "rejoin backs off exponentially: 1 minute, 5 minutes, 30 minutes, then every 6 hours;",
        "unit tests for every exit path",
    ]


def test_split_keeps_field_lines_and_table_rows_apart() -> None:
    text = (
        "Booking reference  K7QX4M\n"
        "Guests: Sofie Dekker, Maya Lindqvist\n"
        "Nights: 4\n"
        "\n"
        "| Order | Qty | First-pass yield |\n"
        "|-------|-----|------------------|\n"
        "| Rev D batch 2 | 3,000 | 98.1% |\n"
    )
    assert split_sentences(text) == [
        "Booking reference | K7QX4M",
        "Guests: Sofie Dekker, Maya Lindqvist",
        "Nights: 4",
        "Order: Rev D batch 2; Qty: 3,000; First-pass yield: 98.1%",
    ]


def test_split_joins_a_line_wrapped_after_a_colon_and_stops_at_the_signature() -> None:
    text = (
        "I've uploaded the WOZ-beschikking (EUR 412,000), the mortgage statement (interest paid:\n"
        "EUR 7,912.36) to your portal.\n"
        "-- \n"
        "Maya Lindqvist, Engineering Manager, call me on 06 1234 5678 any time.\n"
    )
    assert split_sentences(text) == [
        "I've uploaded the WOZ-beschikking (EUR 412,000), the mortgage statement "
        "(interest paid: EUR 7,912.36) to your portal."
    ]


def test_a_note_heading_and_list_intro_are_context_not_lines() -> None:
    text = (
        "Note: Tax checklist\n# Tax checklist\n\n## Sanne's fee\n\n"
        "Fixed fee EUR 495 incl. VAT for the return, plus EUR 95 per extra hour.\n"
    )
    (line,) = mail_lines(text)
    assert line.text == "Fixed fee EUR 495 incl. VAT for the return, plus EUR 95 per extra hour."
    assert line.context == "Sanne's fee" and line.scored.startswith("Sanne's fee Fixed fee")


FORWARDED = """From: jeff.skilling@enron.com | Date: 2000-02-01 | Subject: Expense report
The attached expense report has been approved.  Please process for payment.
Jeff Skilling
---------------------- Forwarded by Jeff Skilling/Corp/Enron on 02/01/2000
04:17 PM ---------------------------

Angela Schwarz
04/27/2001 04:17 PM
To: Jeff Skilling/Corp/Enron@ENRON
cc: Jeremy Blachman/HOU/EES@EES,
    Rick Buy/HOU/ECT@ECT
Subject: Sherri Sera's expense report

Attached is an expense report for Sherri Sera that requires approval.  Please
review, approve and forward to "expense reports."

(Embedded image moved to file: pic18132.pcx)
 - pic18132.pcx"""


def test_a_forward_banner_and_its_header_block_are_left_out_and_what_follows_is_quoted() -> None:
    lines = mail_lines(FORWARDED)
    assert [line.text for line in lines] == [
        "The attached expense report has been approved.",
        "Please process for payment.",
        "Attached is an expense report for Sherri Sera that requires approval.",
        'Please review, approve and forward to "expense reports."',
    ]
    assert [line.quoted for line in lines] == [False, False, True, True]


def test_an_original_message_header_block_and_a_disclaimer_are_left_out() -> None:
    text = (
        "Sounds good, see you at 10.\n\n"
        "-----Original Message-----\n"
        "From: Sera, Sherri\n"
        "Sent: Monday, October 22, 2001 9:12 AM\n"
        "To: Skilling, Jeff\n"
        "Subject: Board meeting\n\n"
        "The board meets on Tuesday at 10:30 in the 50th floor boardroom.\n\n"
        "This e-mail is the property of Enron Corp. and may contain confidential and\n"
        "privileged material for the sole use of the intended recipient (s).\n"
    )
    assert [(line.text, line.quoted) for line in mail_lines(text)] == [
        ("Sounds good, see you at 10.", False),
        ("The board meets on Tuesday at 10:30 in the 50th floor boardroom.", True),
    ]


def test_a_webmail_ad_and_its_link_are_left_out_and_the_quoted_mail_after_it_is_not() -> None:
    text = (
        "We stayed three nights in Sirola, on the coast.\n\n"
        "__________________________________________________\n"
        "Do You Yahoo!?\n"
        "Make international calls for as low as $.04/minute with Yahoo! Messenger\n"
        "http://phonecard.yahoo.com/\n\n"
        "Get Your Private, Free E-mail from MSN Hotmail at http://www.hotmail.com .\n\n"
        "> The ferry leaves Split at nine on Saturday.\n"
    )
    assert [(line.text, line.quoted) for line in mail_lines(text)] == [
        ("We stayed three nights in Sirola, on the coast.", False),
        ("The ferry leaves Split at nine on Saturday.", True),
    ]


def test_two_spaces_after_a_sentence_are_no_table_columns() -> None:
    text = (
        "these are the conferences we discussed on Thursday.    Will discuss further\n"
        "with you on Monday.  thanks"
    )
    assert split_sentences(text) == [
        "these are the conferences we discussed on Thursday.",
        "Will discuss further with you on Monday. thanks",
    ]


REPLY = """From: Jeff Skilling | Date: 2000-03-29 | Subject: Re: Home-Link
Jeff suggests that you speak to Lou Pai about the utility connections.

On Tue, 28 Mar 2000 at 13:34, Yelba Saettone <YSaettone@home-link.com>
wrote:
> I am looking for the right person to talk to at Enron.

Yelba Saettone <YSaettone@home-link.com> on 03/28/2000 01:34:07 PM
Please respond to YSaettone@home-link.com
To: Jeff Skilling/Corp/Enron@ENRON
cc:
Subject: Home-Link

Home-Link connects utilities for people who move house."""


def test_a_reply_attribution_and_a_sender_stamp_with_its_header_are_no_lines() -> None:
    lines = mail_lines(REPLY)
    assert [(line.text, line.quoted) for line in lines] == [
        ("Jeff suggests that you speak to Lou Pai about the utility connections.", False),
        ("I am looking for the right person to talk to at Enron.", True),
        ("Home-Link connects utilities for people who move house.", True),
    ]


WRAPPED_STAMP = """I'd like to keep a last veto right - just give me a call.

Jay Fitzgerald@ECT
05/09/2001 08:55 AM
To: Jeff Skilling/Corp/Enron@ENRON
cc:
Subject: Resignation

As you may know, I have decided to resign from Enron."""


def test_a_sender_stamp_whose_name_wrapped_above_is_no_line() -> None:
    """Lotus Notes wraps a long stamp's name onto the line above: '05/09/2001 08:55 AM' alone
    was shown as the quote's first line (the dev mailbox's s13, s35, s38); it is a stamp, and
    what follows its header is the mail it quotes. A date and time alone elsewhere is no line
    either."""
    assert [(line.text, line.quoted) for line in mail_lines(WRAPPED_STAMP)] == [
        ("I'd like to keep a last veto right - just give me a call.", False),
        ("As you may know, I have decided to resign from Enron.", True),
    ]
    alone = "The call is confirmed.\n\n01/31/2001 02:58 AM\n\nIt is at noon in London."
    assert [line.text for line in mail_lines(alone)] == [
        "The call is confirmed.",
        "It is at noon in London.",
    ]


def test_one_line_attributions_in_several_languages_are_no_lines() -> None:
    for attribution in (
        "On Mon, Mar 2, 2026 at 9:14 AM Lotte Visser <lotte@x.nl> wrote:",
        "Lotte Visser <lotte@x.nl> wrote:",
        "Op ma 2 mrt 2026 om 09:14 schreef Lotte Visser <lotte@x.nl>:",
    ):
        text = f"Friday works for all of us.\n\n{attribution}\n> The demo is at 10:00.\n"
        assert [(line.text, line.quoted) for line in mail_lines(text)] == [
            ("Friday works for all of us.", False),
            ("The demo is at 10:00.", True),
        ], attribution


def test_header_remains_laid_out_in_columns_or_cut_by_the_chunk_are_no_lines() -> None:
    text = (
        "Williamson/Corp/Enron@ENRON Subject: ECI Analyst Presentation Meeting - 12/21/99\n\n"
        "The next meeting is on Tuesday, December 21 in 50M.\n\n"
        "Kevin Hannon 06/11/01 01:22 PM \t   To: Steven J Kean/NA/Enron  cc: Jeff Skilling/Corp/"
        "Enron  bcc:   Subject: Memo\n\n"
        "We have formed a new business unit for emerging markets.\n"
        "Pedro Haas 06/11/2001 To: jeff.skilling@enron.com 02:19 PM cc:\n"
        "Subject: trip to Spain\n\n"
        "Linton/NA/Enron@Enron, Claudette Harvey/HOU/ECT@ect, Crystal Blair/HOU/ECT@ECT\n\n"
        "His e-mail is greg.piper@enron.com if you want to reach him.\n"
    )
    assert split_sentences(text) == [
        "The next meeting is on Tuesday, December 21 in 50M.",
        "We have formed a new business unit for emerging markets.",
        "His e-mail is greg.piper@enron.com if you want to reach him.",
    ]


def test_short_lines_in_a_run_are_a_list_and_a_value_after_a_colon_keeps_its_lead() -> None:
    text = (
        "TAG Aviation is pleased to offer this aircraft.\n"
        "1994 Challenger 601-3R, serial number 5171\n"
        "Total Time 2695\n"
        "Landings 1500\n\n"
        "To take the survey you will need to enter the company code, which is:\n\n"
        "C673EV\n"
    )
    lines = mail_lines(text)
    assert [line.text for line in lines] == [
        "TAG Aviation is pleased to offer this aircraft.",
        "1994 Challenger 601-3R, serial number 5171",
        "Total Time 2695",
        "Landings 1500",
        "C673EV",
    ]
    assert lines[-1].context.endswith("the company code, which is:")


def test_a_short_line_standing_alone_is_still_a_heading() -> None:
    text = "Repotting plan\n\nThe monstera moves to the 30 cm pot in April.\n"
    assert [(line.text, line.context) for line in mail_lines(text)] == [
        ("The monstera moves to the 30 cm pot in April.", "Repotting plan")
    ]


def test_a_short_line_with_nothing_below_it_heads_nothing_and_is_a_line() -> None:
    text = (
        "Please approve the following purchase for Susan Scott.\n\n"
        "Compaq laptop (1 ea)  $2,745.00 2,745.00 total\n"
        "Docking stations (2 ea)        587.00 ea 1,174.00 total\n\n"
        "      4,494.00 grand total\n"
    )
    assert split_sentences(text)[-1] == "4,494.00 grand total"


def test_prose_with_double_spaces_is_no_table_and_parentheses_hold_their_full_stops() -> None:
    text = (
        "The build out of the Internet and the rapid  deployment of eBusiness is why we\n"
        "wrote.  Professor Stevenson (Harvard Bus. Sch. - Entrepreneurship) will be in Houston\n"
        'on June 14 to discuss a case study entitled "Modern Giants".\n\n'
        "Booking reference  K7QX4M\n"
    )
    assert split_sentences(text) == [
        "The build out of the Internet and the rapid deployment of eBusiness is why we wrote.",
        "Professor Stevenson (Harvard Bus. Sch. - Entrepreneurship) will be in Houston on June "
        '14 to discuss a case study entitled "Modern Giants".',
        "Booking reference | K7QX4M",
    ]
