"""Background passages: a fixed set of everyday sentences about unrelated topics.

Every query is compared with them to learn how similar an *unrelated* passage looks to that
query under the current embedder (embedders bunch cosine scores, and by different amounts for
different languages), so a stored memory counts as relevant only when it stands out from this
background.
"""

from __future__ import annotations

import base64
import hashlib
from importlib import resources
from typing import Protocol

import numpy as np

from ebbing.embed.base import Embedder
from ebbing.errors import ReadOnly
from ebbing.recall.search import Background

BACKGROUND_EN: tuple[str, ...] = (
    "I made a big pot of lentil soup on Sunday and froze half of it.",
    "My sourdough starter finally doubled overnight after I kept it near the warm oven.",
    "Tonight I am trying a Thai green curry recipe with eggplant and basil.",
    "The cast iron pan I bought needs seasoning before I cook eggs in it.",
    "I burned the garlic bread again because I forgot to set a kitchen timer.",
    "We booked a week in Lisbon for October and still need a hotel near the river.",
    "My flight to Denver was delayed three hours, so I missed the connecting bus.",
    "I always pack too many shoes when I travel for more than four days.",
    "The night train from Vienna to Venice was cheaper than I expected.",
    "I want to hike part of the Camino next spring with my cousin.",
    "Our local soccer team lost two to one in the last minute on Saturday.",
    "I joined a Tuesday night volleyball league at the community center.",
    "My brother is convinced his basketball team will make the playoffs this year.",
    "I watched the whole tennis final even though it ended after midnight.",
    "The swimming pool near my office reopened with a new lap lane schedule.",
    "I have been practicing the same piano piece for three weeks and still stumble.",
    "We got tickets to see a jazz quartet at a small club downtown.",
    "My guitar strings keep slipping out of tune whenever the heater runs.",
    "I made a playlist of old soul songs for my parents' anniversary dinner.",
    "The choir I sing in starts rehearsing its Christmas program in September.",
    "It rained all weekend, so our picnic plans got canceled again.",
    "The forecast says a heat wave is coming and my apartment has no air conditioning.",
    "We had the first frost last night and the car windshield was completely white.",
    "Strong winds knocked a branch onto our fence during the storm on Thursday.",
    "I love foggy mornings when the whole valley disappears under the clouds.",
    "My sister just had her second baby, a little girl named Clara.",
    "Grandma turns ninety next month and we are planning a surprise lunch.",
    "My dad keeps calling me to ask how to send photos from his phone.",
    "The kids argued for an hour about who gets the top bunk bed.",
    "My aunt is visiting from Manila for three weeks this summer.",
    "Our dog chewed through the couch cushion while we were at the cinema.",
    "The vet said my cat needs to lose about a pound before her next checkup.",
    "I adopted a rescue rabbit and he hides under the bookshelf all day.",
    "My goldfish tank has gotten cloudy even though I changed the filter.",
    "The puppy finally learned to sit, but only when I hold a treat.",
    "My tomato plants are tall but the fruit keeps splitting after heavy watering.",
    "I planted tulip bulbs along the front path and hope the squirrels leave them alone.",
    "The basil on my balcony bolted and now the leaves taste bitter.",
    "I am building a raised bed from cedar boards for growing lettuce.",
    "Aphids are covering the roses again and I would rather not spray chemicals.",
    "I returned the blue sweater because the sleeves were far too long.",
    "The grocery store stopped carrying my favorite brand of oat milk.",
    "I am comparing two vacuum cleaners and cannot decide which one is quieter.",
    "I found a used bike in great condition at the weekend flea market.",
    "My online order of kitchen towels arrived in the wrong color.",
    "We watched an old black and white detective film last night and loved it.",
    "I fell asleep halfway through the three hour space movie at the theater.",
    "My friends want to start a monthly movie night with themed snacks.",
    "The documentary about deep sea creatures was more fascinating than I expected.",
    "I still cannot decide whether the sequel was better than the original film.",
    "I finished a long historical novel about shipbuilders in nineteenth century Scotland.",
    "My book club picked a mystery novel set on a small Greek island.",
    "I keep buying books faster than I can read them, and the shelf is overflowing.",
    "I am trying to read twenty pages every night before bed.",
    "My library hold on that popular memoir finally came through after two months.",
    "I have a dentist appointment on Friday to fix a chipped molar.",
    "My eye exam showed my prescription changed, so I need new glasses.",
    "The physiotherapist gave me daily stretches for my sore lower back.",
    "I need to reschedule my annual checkup because of a work trip.",
    "The clinic called to say my blood test results all came back normal.",
    "My car makes a squeaking noise whenever I turn the steering wheel left.",
    "I need new winter tires before the mountain roads get icy.",
    "The check engine light came on during my drive to work this morning.",
    "We are thinking about buying a used hybrid to save on fuel.",
    "Someone scratched my car door in the supermarket parking lot.",
    "The kitchen faucet has been dripping for a week and I cannot find the right washer.",
    "I patched a hole in the bedroom wall and now need to match the paint.",
    "Our washing machine shakes so hard during the spin cycle that it walks across the floor.",
    "The bathroom fan is loud, so I am replacing it myself this weekend.",
    "A hinge on the wardrobe door broke and now the door hangs crooked.",
    "I set up an automatic transfer to put a little money into savings each payday.",
    "My electricity bill doubled this winter and I want to figure out why.",
    "I am tracking every coffee purchase for a month to see the total.",
    "We are saving for a new roof, so we cut back on eating out.",
    "I finally filed my tax return two days before the deadline.",
    "My son has a science fair project on how salt affects melting ice.",
    "I am taking an evening statistics course and the homework takes hours.",
    "The parent teacher meeting is on Wednesday right after lunch.",
    "My daughter wants to switch from the flute to the drums in the school band.",
    "I have a final exam in organic chemistry next Monday and feel unprepared.",
    "I started knitting a scarf, but the edges keep curling inward.",
    "I spent the afternoon painting watercolor landscapes of the harbor.",
    "My model train layout now has a little station and a working bridge.",
    "I have been learning calligraphy with a broad nib pen for a month.",
    "I finished a thousand piece jigsaw puzzle of a lighthouse last night.",
    "My JavaScript form validation shows the error message twice on submit.",
    "I spent the morning fixing a CSS layout that breaks on small phone screens.",
    "A merge conflict in git wiped out my changes until I checked the reflog.",
    "I am writing unit tests for a date formatting function that mishandles leap years.",
    "Our build pipeline fails randomly and rerunning it usually makes it pass.",
    "My manager pushed the quarterly review to Thursday afternoon.",
    "I have to prepare slides for a client presentation by tomorrow morning.",
    "The printer on our floor jams every time someone prints double sided.",
    "I spend too much time in meetings and barely get any focused work done.",
    "Our team is switching to a new expense reporting tool next month.",
    "We are hosting Thanksgiving dinner for twelve people this year.",
    "I still have not bought Christmas presents for my two nieces.",
    "For New Year's Eve we plan to watch fireworks from the hill behind town.",
    "My kids want to carve three pumpkins for Halloween this weekend.",
    "We always make dumplings together with my in-laws for Lunar New Year.",
    "I signed up for a half marathon in April and started a training plan.",
    "My knees ache after running downhill, so I am trying shorter strides.",
    "I attend a yoga class on Thursday mornings before work.",
    "I want to do ten pull-ups by summer but can only manage three now.",
    "The new gym near my office is crowded every evening after six.",
    "I bought a secondhand film camera and shot my first roll at the beach.",
    "My photos of the sunset came out blurry because my hands were shaking.",
    "I am learning how to edit portraits without making skin look plastic.",
    "I took pictures of the neighborhood cherry blossoms at sunrise.",
    "My camera battery died right as the eagle landed on the branch.",
    "I switched from a drip machine to a pour over and the coffee tastes brighter.",
    "A friend brought me oolong tea from Taiwan and it smells like orchids.",
    "I am trying to cut down to one cup of coffee before noon.",
    "The café on my corner started roasting its own beans last month.",
    "My milk frother broke, so my morning lattes are flat now.",
    "We played a board game about building railroads until two in the morning.",
    "I finally beat the last boss in that puzzle adventure game after forty tries.",
    "My chess rating climbed fifty points after I studied endgames.",
    "Our family plays cards every Sunday evening after dinner.",
    "I bought a new controller because the old one drifts to the left.",
)

BACKGROUND_ZH: tuple[str, ...] = (
    "周末我炖了一锅萝卜排骨汤，孩子们一口气喝了两碗。",
    "我第一次自己包饺子，结果下锅后破了一大半。",
    "今晚想做红烧肉，可是家里的冰糖刚好用完了。",
    "新买的电饭煲煮出来的米饭总是有点夹生。",
    "我妈教我做西红柿炒蛋，说要先炒蛋再放番茄。",
    "国庆打算去云南大理玩五天，还没订好民宿。",
    "上次坐高铁去西安，只用了四个多小时就到了。",
    "我每次出门旅行都带太多衣服，箱子根本合不上。",
    "明年春天想和大学室友一起去日本看樱花。",
    "在桂林坐竹筏漂漓江的时候，风景美得像画一样。",
    "昨晚看国足比赛，最后一分钟被对手扳平了。",
    "我报名了公司组织的羽毛球比赛，下周开始打小组赛。",
    "我爸每天早上都去公园打太极拳，风雨无阻。",
    "小区新开了一个游泳馆，办年卡可以打八折。",
    "周六下午我们几个同事约好去打篮球。",
    "我学古筝快半年了，轮指还是弹得不够均匀。",
    "下个月有个乐队来我们城市开演唱会，票一开售就抢光了。",
    "我最近喜欢在通勤路上听老歌，尤其是八十年代的粤语歌。",
    "女儿在学小提琴，每天练琴的声音让邻居有点意见。",
    "公司年会我被安排参加合唱，每天午休都要排练。",
    "今天又是沙尘天气，出门必须戴口罩。",
    "回南天太难受了，墙壁和地板都在冒水。",
    "天气预报说周末有台风，我们的露营计划只好取消。",
    "今年冬天特别冷，家里的暖气片烧得不够热。",
    "早上起来发现下了第一场雪，整条街都白了。",
    "我奶奶今年八十五岁了，身体还很硬朗，每天自己买菜。",
    "我弟弟下个月结婚，我负责帮他联系婚车。",
    "我妈最近迷上了广场舞，每天晚饭后准时出门。",
    "两个孩子为了抢电视遥控器又吵了一架。",
    "春节回老家，舅舅非要拉着我喝白酒。",
    "我家的猫最近总是半夜在客厅里跑来跑去。",
    "带狗去打疫苗，它在宠物医院门口死活不肯进去。",
    "我养的两只仓鼠昨天从笼子里跑出去了，找了一晚上。",
    "朋友出差，把她的柯基寄养在我家一周。",
    "鱼缸里的水草长得太快，每周都要修剪一次。",
    "阳台上的多肉浇水太多，有几棵已经烂根了。",
    "我在楼顶种了几盆辣椒，今年结了不少果子。",
    "家里的绿萝叶子发黄，不知道是不是光照不够。",
    "春天在院子里撒了一把向日葵种子，现在已经发芽了。",
    "我爸在老家的菜地里种了白菜和萝卜，说冬天够吃了。",
    "双十一我买了一台扫地机器人，到现在还没拆箱。",
    "网上买的裤子太长了，只好拿去裁缝店改短一点。",
    "超市的鸡蛋又涨价了，一盒比上个月贵了两块钱。",
    "我在二手平台上卖掉了家里闲置的跑步机。",
    "想换一个新手机，但是一直在两个型号之间犹豫。",
    "昨晚和朋友去电影院看了一部科幻片，特效非常震撼。",
    "我周末在家把一部老港片又重温了一遍。",
    "那部纪录片讲的是青藏高原的野生动物，拍得特别好。",
    "电影看到一半我就睡着了，醒来时片尾字幕都放完了。",
    "春节档的几部电影我都想看，但是票价有点贵。",
    "我最近在读一本讲明朝历史的书，写得很有意思。",
    "每天睡前读半小时书，已经坚持两个月了。",
    "读书会这个月选了一本推理小说，周六晚上讨论。",
    "书架已经塞满了，新买的书只能堆在床头。",
    "在图书馆借的书快到期了，可是我还没看完一半。",
    "明天上午要去医院拔智齿，我有点紧张。",
    "体检报告出来了，医生说我的血脂有点偏高。",
    "最近颈椎不舒服，约了周四下午去做理疗。",
    "孩子发烧到三十九度，半夜带他去挂了急诊。",
    "新配的眼镜度数不对，戴着看东西总是头晕。",
    "我的车开了八年，最近刹车的时候总有异响。",
    "下周要带车去做年检，得先把违章处理掉。",
    "今天早上在停车场倒车时不小心蹭到了柱子。",
    "我们家在考虑换一辆电动车，主要是充电比加油便宜。",
    "冬天到了，我得去给车换一套雪地胎。",
    "厨房的水龙头一直滴水，我打算周末自己换个阀芯。",
    "卫生间的下水道又堵了，请了师傅上门来疏通。",
    "卧室的墙皮开始脱落，可能需要重新刷一遍漆。",
    "客厅的吊灯坏了一个灯泡，我踩着椅子换了半天。",
    "洗衣机脱水的时候晃得特别厉害，声音像打雷一样。",
    "我每个月发工资后先存一千块进定期账户。",
    "这个月信用卡账单比平时多了好几千，吓了我一跳。",
    "最近在学记账，发现每个月在外卖上花了不少钱。",
    "我和老公商量着攒钱，明年想给家里换一套新沙发。",
    "今年的个税汇算我终于搞明白了，还退了几百块。",
    "儿子明天要交手抄报，我们全家熬夜帮他画画。",
    "我报了一个周末的会计培训班，准备考初级证书。",
    "女儿这次数学考了满分，高兴得跳了起来。",
    "下周三学校开家长会，我得跟公司请半天假。",
    "我在准备考研英语，每天背一百个单词。",
    "我最近迷上了做手工皮具，刚缝好一个钱包。",
    "周末去公园写生，画了一下午的荷花。",
    "我在学织毛线，想在入冬前给妈妈织一条围巾。",
    "我收集了三十多个不同国家的邮票。",
    "我花了一个月才拼好一套故宫角楼的积木。",
    "我写的网页在手机上显示错位，调了一下午样式。",
    "今天合并代码时出现了一堆冲突，花了两个小时才解决。",
    "前端页面的按钮点一下会提交两次，还没找到原因。",
    "我在给日期处理函数补单元测试，闰年的情况总是算错。",
    "项目的打包时间越来越长，想研究一下怎么优化。",
    "周一早上要给客户做汇报，今晚还得改幻灯片。",
    "我们部门下个月要换新的报销系统，大家都得重新学。",
    "办公室的空调温度太低，我只好在座位上放一件外套。",
    "今天连着开了五个会，正经工作一点都没做。",
    "领导让我周五之前交季度总结，我还没动笔。",
    "今年中秋我们打算在家自己做月饼。",
    "春节前要大扫除，还得去买春联和福字。",
    "端午节我妈包了好多粽子，有肉的也有红豆的。",
    "元宵节晚上我们一家人去河边看花灯。",
    "情人节想给女朋友准备一个小惊喜，还没想好送什么。",
    "我报名了明年春天的半程马拉松，已经开始按计划训练。",
    "跑步之后膝盖有点疼，教练建议我先加强腿部力量。",
    "我每周去健身房三次，主要练卧推和深蹲。",
    "最近晚上在楼下跳绳，一次能跳一千下。",
    "我周四早上上瑜伽课，一开始连腿都伸不直。",
    "我买了一台二手胶片相机，第一卷胶卷拍的全是海边。",
    "拍日落的时候手一直抖，照片全是糊的。",
    "我在学用修图软件调色，总是把天空调得太蓝。",
    "清晨去湖边拍鸟，等了两个小时才拍到一只翠鸟。",
    "相机电池在最关键的时候没电了，真是太可惜了。",
    "朋友从福建给我寄了一罐铁观音，香味特别浓。",
    "我最近在学用手冲壶冲咖啡，水温总是掌握不好。",
    "楼下新开了一家咖啡店，老板自己烘焙咖啡豆。",
    "我想把每天的咖啡减到一杯，下午改喝绿茶。",
    "周末陪爸妈去茶馆喝茶，听了一下午评书。",
    "昨晚和朋友打麻将打到凌晨两点，输了一百多块。",
    "我终于打通了那个解谜游戏的最后一关，试了四十多次。",
    "最近跟着视频学下围棋，已经能和我爸下几盘了。",
    "我们家每周日晚上都会一起玩桌游。",
    "游戏手柄的摇杆一直往左漂移，只好买了个新的。",
)


SHIPPED = "background-vectors.npz"  # the default embedder's vectors of these texts, made by scripts/


class _Meta(Protocol):
    def get_meta(self, key: str) -> str | None: ...

    def set_meta(self, key: str, value: str) -> None: ...


def digest() -> str:
    return hashlib.sha256("\n".join((*BACKGROUND_EN, *BACKGROUND_ZH)).encode()).hexdigest()[:16]


def compute(embedder: Embedder) -> tuple[np.ndarray, np.ndarray]:
    texts = [*BACKGROUND_EN, *BACKGROUND_ZH]
    return embedder.embed(texts), embedder.embed(texts, query=True)


def background_vectors(embedder: Embedder, cache: _Meta) -> tuple[np.ndarray, np.ndarray]:
    """(passage vectors, query vectors) of the background texts under `embedder`.

    Embedding 480 texts takes seconds, so the default embedder's vectors ship with the package and any
    other embedder's are computed once and kept in the store's meta table.
    """
    shipped = resources.files("ebbing.recall").joinpath(SHIPPED)
    if shipped.is_file():
        with shipped.open("rb") as handle, np.load(handle) as data:
            if str(data["embedder"]) == embedder.name and str(data["digest"]) == digest():
                return data["passages"].astype(np.float32), data["queries"].astype(np.float32)
    count = len(BACKGROUND_EN) + len(BACKGROUND_ZH)
    keys = [f"background:{embedder.name}:{mode}:{digest()}" for mode in ("passage", "query")]
    stored = [cache.get_meta(key) for key in keys]
    if stored[0] is not None and stored[1] is not None:
        decoded = [np.frombuffer(base64.b64decode(v), dtype="<f4").reshape(count, -1) for v in stored if v]
        return decoded[0].astype(np.float32), decoded[1].astype(np.float32)
    passages, queries = compute(embedder)
    try:
        for key, matrix in zip(keys, (passages, queries), strict=True):
            cache.set_meta(key, base64.b64encode(np.asarray(matrix, dtype="<f4").tobytes()).decode("ascii"))
    except ReadOnly:
        pass  # a read-only store computes them again next time; nothing is lost
    return passages, queries


class LazyBackground:
    """The background a store's searches and writes read, built at its first use (a store that is only swept
    never embeds it): `Background` split by language."""

    def __init__(self, embedder: Embedder, cache: _Meta) -> None:
        self.embedder, self.cache = embedder, cache
        self._background: Background | None = None

    def __call__(self) -> Background:
        if self._background is None:
            passages, queries = background_vectors(self.embedder, self.cache)
            split = len(BACKGROUND_EN)
            self._background = Background({False: passages[:split], True: passages[split:]},
                                          {False: queries[:split], True: queries[split:]})
        return self._background
